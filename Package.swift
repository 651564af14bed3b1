// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "ObservationTokens",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ObservationTokens", targets: ["ObservationTokens"]),
        .executable(name: "TokenDemo", targets: ["TokenDemo"]),
    ],
    targets: [
        .target(name: "ObservationTokens", dependencies: ["CObservationTokensRuntime"]),
        // One Swift runtime entry point (`swift_tryRetain`), called with its C convention.
        .target(name: "CObservationTokensRuntime"),
        .executableTarget(name: "TokenDemo", dependencies: ["ObservationTokens"]),
        .testTarget(name: "ObservationTokensTests", dependencies: ["ObservationTokens"]),
        // A user module built as new app targets are: every declaration is on the main actor
        // unless it says otherwise. Proves the documented model declaration compiles and works.
        .testTarget(
            name: "DefaultIsolationTests", dependencies: ["ObservationTokens"],
            swiftSettings: [.defaultIsolation(MainActor.self)]),
    ],
    swiftLanguageModes: [.v6]
)
