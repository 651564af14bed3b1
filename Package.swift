// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ObservationTokens",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ObservationTokens", targets: ["ObservationTokens"]),
        .executable(name: "TokenDemo", targets: ["TokenDemo"]),
    ],
    targets: [
        .target(name: "ObservationTokens"),
        .executableTarget(name: "TokenDemo", dependencies: ["ObservationTokens"]),
        .testTarget(name: "ObservationTokensTests", dependencies: ["ObservationTokens"]),
    ],
    swiftLanguageModes: [.v6]
)
