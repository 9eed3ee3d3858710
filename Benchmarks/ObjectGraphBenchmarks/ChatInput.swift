/// The chats and messages the insert workloads write, generated before the timed runs so
/// that no side's timed insert spends its time building the strings it writes (building
/// them inside the runs added the same string work to both sides, which pulled the ratio
/// towards 1). Chat `c` (1-based) has messages `index` 0..<M, stored at `(c-1)·M + index`.
struct ChatInput: Sendable {
    let sizes: Sizes
    private let titles: [String]
    private let texts: [String]
    private let times: [Double]

    init(_ sizes: Sizes) {
        self.sizes = sizes
        titles = (1...max(sizes.chats, 1)).map(BenchmarkData.chatTitle)
        var texts: [String] = []
        var times: [Double] = []
        texts.reserveCapacity(sizes.messages)
        times.reserveCapacity(sizes.messages)
        for c in 1...max(sizes.chats, 1) {
            for index in 0..<sizes.messagesPerChat {
                texts.append(BenchmarkData.messageText(chat: c, index: index))
                times.append(BenchmarkData.sentAt(chat: c, index: index, perChat: sizes.messagesPerChat))
            }
        }
        self.texts = texts
        self.times = times
    }

    /// Chat `c`'s title.
    func title(_ chat: Int) -> String { titles[chat - 1] }
    /// The text of chat `c`'s message `index`.
    func text(chat: Int, index: Int) -> String { texts[(chat - 1) * sizes.messagesPerChat + index] }
    /// The sent time (reference-date seconds) of chat `c`'s message `index`.
    func sentAt(chat: Int, index: Int) -> Double { times[(chat - 1) * sizes.messagesPerChat + index] }
}
