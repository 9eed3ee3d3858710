/// The one field an ``Attribute`` or ``Relationship`` wrapper stores in its object: what,
/// with the class that declares the wrapper, identifies the declaration, so that a typed
/// access finds its model property without the storage key path.
///
/// A typed access is handed the wrapper's storage key path, and finding the property by that
/// key path made every access instantiate it (`swift_getKeyPath`: a runtime call and a
/// retain) and release it again, and read the token through a dynamic exclusivity check —
/// about a tenth of a fetch that reads two attributes of each object. Once nothing but a
/// read of the token uses the key path, the accessor, inlined where the key path is a
/// literal, reads the field directly and the key path is never made.
///
/// The class that declares the wrapper is the accessor's `Object` type (the accessor is
/// synthesized in that class; a subclass calls its superclass's), a constant where the
/// accessor is inlined. A class's stored properties are all declared in its body, in one
/// file, so the position of a declaration tells it from the class's others; the class tells
/// it from those of its superclasses and subclasses, which may sit at the same position in
/// other files.
///
/// A token is one of:
/// - an explicit name's interned token (`@Attribute("body")`), below ``declarationTag``: the
///   name itself identifies the property;
/// - a declaration token: ``declarationTag`` with the line (its low 20 bits) and column (its
///   low 11 bits) of the declaration, passed by the wrapper initializer's default arguments.
///   Two wrappers of one class holding one (only past line 1,048,575 or column 2,047, or when
///   the arguments are written out) stop the process at the first access, with the advice to
///   name one of them explicitly.
@usableFromInline
enum WrapperToken {
    /// Set in every declaration token; interned names stay below it.
    @usableFromInline static let declarationTag: UInt32 = 0x8000_0000

    /// The token of a declaration at `line` and `column`.
    @inlinable
    static func declaration(line: UInt, column: UInt) -> UInt32 {
        declarationTag | (UInt32(truncatingIfNeeded: line) & 0xF_FFFF) << 11 | (UInt32(truncatingIfNeeded: column) & 0x7FF)
    }

    /// Whether `token` is an explicit name's.
    static func isName(_ token: UInt32) -> Bool { token < declarationTag }

    /// The declared name (without the storage's `_`) of the wrapper of `object` that
    /// `declaringClass` declares with the declaration token `token`, found by reflection: once
    /// per entity, class and property.
    static func declaredName(of token: UInt32, declaredIn declaringClass: ManagedObject.Type, in object: ManagedObject) -> String {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            if ObjectIdentifier(current.subjectType) == ObjectIdentifier(declaringClass) {
                var found: String?
                for child in current.children {
                    guard let wrapper = child.value as? any ManagedPropertyWrapper, wrapper.token == token,
                          let label = child.label else { continue }
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    if let found {
                        ManagedObject.trap("\(declaringClass) declares wrapped properties \(found) and \(name) whose declarations have the same position token \(token); name one explicitly, e.g. @Attribute(\"\(name)\") or @Relationship(\"\(name)\")")
                    }
                    found = name
                }
                if let found { return found }
            }
            mirror = current.superclassMirror
        }
        ManagedObject.trap("could not find the wrapped property with token \(token) that \(declaringClass) declares in \(type(of: object))")
    }
}
