import Foundation

/// Turns a transformable attribute's value into bytes and back (Core Data's value transformer,
/// renamed because Foundation on Darwin already has `ValueTransformer`).
///
/// The usual transformer is ``codable(_:)``: any `Codable` value, encoded as JSON with sorted
/// keys so that equal values give equal bytes.
public struct AttributeTransformer: Sendable {
    /// The name of the value type, for messages.
    public let valueTypeName: String
    let encodeValue: @Sendable (Any) throws -> Data?
    let decodeValue: @Sendable (Data) throws -> Any

    /// Creates a transformer from two functions. `encode` returns `nil` when the value is not of
    /// the expected type.
    public init(
        valueTypeName: String,
        encode: @escaping @Sendable (Any) throws -> Data?,
        decode: @escaping @Sendable (Data) throws -> Any
    ) {
        self.valueTypeName = valueTypeName
        self.encodeValue = encode
        self.decodeValue = decode
    }

    /// A transformer for a `Codable` type, stored as JSON.
    public static func codable<T: Codable & Sendable>(_ type: T.Type) -> AttributeTransformer {
        AttributeTransformer(
            valueTypeName: String(describing: T.self),
            encode: { value in
                guard let typed = value as? T else { return nil }
                return try transformableEncoder().encode(typed)
            },
            decode: { data in try transformableDecoder().decode(T.self, from: data) }
        )
    }
}

/// The JSON encoder of transformable values: keys sorted, so equal values give equal bytes;
/// non-finite numbers as the strings "NaN", "+Infinity" and "-Infinity", which plain JSON
/// cannot hold (a value holding a NaN failed to encode: through a typed property it was
/// stored as nil, its old value lost; an audit).
func transformableEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return encoder
}

/// The decoder matching ``transformableEncoder()``.
func transformableDecoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return decoder
}
