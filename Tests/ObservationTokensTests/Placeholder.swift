import Testing
@testable import ObservationTokens

final class Addr: ObservableModel {
    @Observed var zip = ""
    @Observed var city = "x"
}
final class Usr: ObservableModel {
    @Observed var address: Addr?
    @Observed var name = ""
}
final class Box: @unchecked Sendable { var count = 0; var log: [String] = [] }

@Test func smoke() {
    let q = CoalescingQueue(target: .manual)
    let a = Addr()
    let box = Box()
    let t = a.observe(\.zip, queue: q) { _ in box.count += 1 }
    for i in 0..<1000 { a.zip = "\(i)" }
    #expect(q.drain() == 1)
    #expect(box.count == 1)
    a.zip = "999"
    #expect(q.drain() == 0)
    a.city = "y"
    #expect(q.drain() == 0)
    a.zip = "1"
    t.invalidate()
    #expect(q.drain() == 0)
    #expect(a._edgeCount.load(ordering: .relaxed) == 0)
    let t2 = a.observeChanges(\.zip, queue: q) { _, c in box.log.append("\(c.old)->\(c.new)") }
    a.zip = "2"; a.zip = "3"
    q.drain()
    #expect(box.log == ["1->3"])
    print(t2.debugDescription)
    let bad = a.observe(\.zip.count, queue: q) { _ in }
    #expect(!bad.isValid)
}

final class Cache: ObservableModel {
    @Observed var user: Usr?
}

@Test func chainSmoke() throws {
    let q = CoalescingQueue(target: .manual)
    let cache = Cache()
    let box = Box()
    let chain = KeyPathChain(\Cache.user).then(\.address).then(\.zip)
    let t = cache.observe(chain, queue: q) { _, zip in box.log.append(zip ?? "nil") }
    let u = Usr(); cache.user = u
    #expect(q.drain() == 1)
    let home = Addr(), work = Addr()
    u.address = home
    home.zip = "1"
    #expect(q.drain() == 1)
    u.address = work
    work.zip = "97210"
    #expect(q.drain() == 1)
    home.zip = "2"
    #expect(q.drain() == 0)
    work.zip = "3"
    #expect(q.drain() == 1)
    #expect(box.log == ["nil", "1", "97210", "3"])
    let s = try cache.observe(path: "user.address.zip", queue: q) { _ in box.count += 1 }
    work.zip = "4"
    #expect(q.drain() == 2)
    #expect(throws: KeyPathError.self) { try cache.observe(path: "user.adress.zip", queue: q) { _ in } }
    do { _ = try cache.observe(path: "user.name.zip", queue: q) { _ in } } catch { print(error) }
    do { _ = try cache.observe(path: "user..zip", queue: q) { _ in } } catch { print(error) }
    print(t.debugDescription, s.debugDescription, u.observedProperties, u.observerCount(ofProperty: "address"))
}
