/// What happens to a relationship's destination when its source object is deleted.
///
/// Rules are applied when the context processes pending changes (at the end of each
/// `perform` block, before a fetch and at save); ``deny`` is checked at save.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Remove the deleted object from the destination's inverse (the default).
    case nullify
    /// Delete the destination objects too, applying their own rules in turn.
    case cascade
    /// Refuse the save (validation code 1600) while the relationship has a destination.
    case deny
    /// Leave the destination alone; its inverse may then point at a deleted object.
    case noAction
}
