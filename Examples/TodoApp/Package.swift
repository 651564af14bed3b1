// swift-tools-version:6.2
import PackageDescription

// The same to-do app written three ways: with ObservationTokens, with Apple's Observation, and
// with OpenCombine. Its own package, so OpenCombine never becomes a dependency of the library.
// Every target is built as new app targets are (main actor by default, Swift 6 language mode),
// and a warning fails the build.
let app: [SwiftSetting] = [.defaultIsolation(MainActor.self), .treatAllWarnings(as: .error)]

let package = Package(
    name: "TodoApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ObservationTokens", path: "../.."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "TodoTokens",
            dependencies: [.product(name: "ObservationTokens", package: "ObservationTokens")],
            swiftSettings: app),
        .executableTarget(name: "TodoObservation", swiftSettings: app),
        .executableTarget(
            name: "TodoCombine",
            dependencies: [
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ],
            swiftSettings: app),
    ],
    swiftLanguageModes: [.v6]
)
