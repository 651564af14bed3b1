// swift-tools-version:6.1
import PackageDescription

// PeerBench measures ObservationTokens against what users would pick instead. It is its own
// package so that the peers (OpenCombine) never become dependencies of the library.
let package = Package(
    name: "PeerBench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ObservationTokens", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "PeerBench",
            dependencies: [
                .product(name: "ObservationTokens", package: "ObservationTokens"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                "CHeapStats",
                "AppWorkloads",
            ]
        ),
        // App-shaped workloads (W17–W19), shared by PeerBench, ProfileTarget and PeerProfile so the
        // timed and the instruction-counted code are the same code.
        .target(
            name: "AppWorkloads",
            dependencies: [
                .product(name: "ObservationTokens", package: "ObservationTokens"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        // glibc's mallinfo2() for W7 (Swift's Glibc module doesn't include <malloc.h>).
        .target(name: "CHeapStats"),
        // Our side of each workload only, for `valgrind --tool=callgrind` (see README.md).
        .executableTarget(
            name: "ProfileTarget",
            dependencies: [.product(name: "ObservationTokens", package: "ObservationTokens"), "AppWorkloads"]
        ),
        // The peers' side (OpenCombine, Observation) of the app-shaped workloads, for callgrind.
        .executableTarget(
            name: "PeerProfile",
            dependencies: ["AppWorkloads", .product(name: "OpenCombine", package: "OpenCombine")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
