import Testing

@testable import ObservationTokens

/// A `@Computed` property's own subscription on its inputs is not a token: listings name the
/// property it computes, and the census leaves it out.
@Suite(.serialized) struct ComputedListingTests {
    @Test func aComputedPropertysInputsListItByNameAndTheCensusLeavesItOut() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        // Given a computed value that read x and y, with no token anywhere
        let sums = PropSums()
        #expect(sums.s == 0)
        // Then x lists it as the computed property, not as a library path
        let report = sums.observationReport
        #expect(report.contains("computed") && report.contains("PropSums.s"))
        #expect(!report.contains("SyntheticDependencies"))
        // and the census counts no token on the model
        #expect(ObservationDebugging.census().filter { $0.observedType == "PropSums" }.isEmpty)
        withExtendedLifetime(sums) {}
    }
}
