import CLMDB
import ObjectGraph

/// How a model maps onto LMDB's named databases (see the backend's README.md for the byte
/// layout): metadata, one row database per entity hierarchy, one member database per to-many
/// relationship (plus a reverse one when there is no inverse to find owners by), and one
/// secondary index per indexed attribute.
struct LMDBLayout: Sendable {
    /// The metadata database.
    static let metadataName = "og:meta"
    /// The metadata key that marks an environment as an ObjectGraph store.
    static let formatKey = "format"
    /// The layout version written in ``formatKey``.
    static let formatValue = "objectgraph-lmdb-2"
    /// The layout before ordered members carried positions: each ordered list was one value,
    /// rewritten whole at every change. Upgraded at open (see ``LMDBLayoutUpgrade``).
    static let listFormatValue = "objectgraph-lmdb-1"

    let model: ManagedObjectModel
    let entities: [EntityDescription]
    /// Entity names by code: the store's entities sorted by name. The model version hash
    /// pins the set, so codes are stable for every store the model may open.
    let entityNames: [String]
    let codes: [String: UInt16]
    /// Attributes with a secondary index, by "Declaring.name".
    let indexedAttributes: [String: AttributeDescription]
    /// The codes a fetch of an entity reads, by the entity's identity: the entity alone, and
    /// the entity with its sub-entities (built once, not per request).
    private let requestCodes: [IdentityKey: (own: EntityCodes, hierarchy: EntityCodes)]

    init(model: ManagedObjectModel, entities: [EntityDescription], indexEverything: Bool) {
        self.model = model
        self.entities = entities
        entityNames = entities.map(\.name).sorted()
        codes = Dictionary(uniqueKeysWithValues: entityNames.enumerated().map { ($1, UInt16($0)) })
        var indexed: [String: AttributeDescription] = [:]
        for entity in entities {
            let constrained = Set(entity.uniquenessConstraints.compactMap(\.first))
            for attribute in entity.attributes where attribute.entityName == entity.name && !attribute.isTransient {
                guard IndexKey.isIndexable(attribute.type) else { continue }
                if indexEverything || attribute.isIndexed || constrained.contains(attribute.name) {
                    indexed[Self.key(attribute)] = attribute
                }
            }
        }
        indexedAttributes = indexed
        let toMany = entities.flatMap { entity in entity.toManyRelationships.filter { $0.entityName == entity.name && !$0.isTransient } }
        toManyRelationships = toMany
        toManyReaching = Dictionary(uniqueKeysWithValues: entities.map { entity in
            (entity.name, toMany.filter { model.destinationEntity(of: $0).hierarchyNames.contains(entity.name) })
        })
        let codes = self.codes
        requestCodes = Dictionary(uniqueKeysWithValues: entities.map { entity in
            (IdentityKey(entity), (own: EntityCodes([codes[entity.name]].compactMap { $0 }), hierarchy: EntityCodes(entity.hierarchyNames.compactMap { codes[$0] })))
        })
    }

    /// The entity codes whose rows `request` reads.
    func codes(of request: StoreFetchRequest) -> EntityCodes {
        codes(of: request.entity, includesSubentities: request.includesSubentities)
    }

    /// The codes of `entity`'s rows, with its sub-entities' when `includesSubentities`.
    func codes(of entity: EntityDescription, includesSubentities: Bool) -> EntityCodes {
        if let known = requestCodes[IdentityKey(entity)] {
            return includesSubentities ? known.hierarchy : known.own
        }
        return EntityCodes((includesSubentities ? entity.hierarchyNames : [entity.name]).compactMap { codes[$0] })
    }

    static func key(_ attribute: AttributeDescription) -> String { "\(attribute.entityName).\(attribute.name)" }
    static func key(_ relationship: RelationshipDescription) -> String { "\(relationship.entityName).\(relationship.name)" }

    static func rowsName(_ root: String) -> String { "og:rows:\(root)" }
    static func membersName(_ relationship: RelationshipDescription) -> String { "og:m:\(key(relationship))" }
    static func ownersName(_ relationship: RelationshipDescription) -> String { "og:mr:\(key(relationship))" }
    static func indexName(_ attribute: AttributeDescription) -> String { "og:i:\(key(attribute))" }

    /// Hierarchy roots of the store's entities.
    var roots: [String] { Array(Set(entities.map(\.rootName))).sorted() }

    /// A named database of the layout besides ``metadataName``.
    enum Database {
        case rows(root: String)
        case members(RelationshipDescription)
        case owners(RelationshipDescription)
        case index(key: String, AttributeDescription)

        /// Its name in the environment.
        var name: String {
            switch self {
            case .rows(let root): LMDBLayout.rowsName(root)
            case .members(let relationship): LMDBLayout.membersName(relationship)
            case .owners(let relationship): LMDBLayout.ownersName(relationship)
            case .index(_, let attribute): LMDBLayout.indexName(attribute)
            }
        }
    }

    /// Every database ``LMDBHandles/open(_:metadata:in:)`` opens besides the metadata, in
    /// that order: the one list both it and ``LMDBStore/checkLimits(_:indexEverything:url:)``
    /// read, so the limits checked are those of the databases actually opened.
    var databases: [Database] {
        roots.map { .rows(root: $0) }
            + toManyRelationships.flatMap { relationship -> [Database] in
                relationship.hasInverse ? [.members(relationship)] : [.members(relationship), .owners(relationship)]
            }
            + indexedAttributes.sorted { $0.key < $1.key }.map { .index(key: $0.key, $0.value) }
    }

    /// The metadata key holding the next free primary key of `root`'s hierarchy.
    static func primaryKeyCounterKey(_ root: String) -> String { "pk:\(root)" }

    /// Stored to-many relationships, each once (by declaring entity).
    let toManyRelationships: [RelationshipDescription]
    /// By entity name: the stored to-many relationships whose destinations include that
    /// entity — the memberships a deleted row of it may be in. Built once: a delete of 10,000
    /// rows rebuilt the relationship list and looked up each destination per row (a sixth of
    /// the save, measured).
    let toManyReaching: [String: [RelationshipDescription]]

    /// The indexed attributes `entity` has (declared or inherited). Found once per entity, for
    /// its route (`Route.indexes`), which every written or deleted row uses.
    func indexes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.attributes.filter { indexedAttributes[Self.key($0)] != nil }
    }

    /// Bytes before the member key in a member entry of `relationship`: an ordered one's
    /// entries begin with their position (``ObjectGraph/OrderPositions``), so its duplicates
    /// sort in list order.
    static func memberOffset(_ relationship: RelationshipDescription) -> Int { relationship.isOrdered ? 8 : 0 }
}

/// The opened database handles of a store's layout.
struct LMDBHandles: Sendable {
    var metadata: MDB_dbi = 0
    var rows: [String: MDB_dbi] = [:]
    var members: [String: MDB_dbi] = [:]
    var owners: [String: MDB_dbi] = [:]
    var indexes: [String: MDB_dbi] = [:]
    /// The same handles by the identity of each relationship and attribute description of the
    /// model (``resolvingIdentities(in:)``): reading a relationship's members built its
    /// "Entity.name" key and hashed it at every call, per fault and per deleted row.
    /// (A members database comes with the entity codes its entries may name, the destination's
    /// hierarchy, found in the one lookup a read of members makes: a second lookup of the
    /// destination, by name, per call was 4% of traversing 10,000 students' subjects, callgrind.)
    private var memberReadsByIdentity: [IdentityKey: MemberRead] = [:]

    /// A members database and the entity codes its entries may name.
    struct MemberRead {
        let dbi: MDB_dbi
        let allowed: EntityCodes
    }
    private var ownersByIdentity: [IdentityKey: MDB_dbi] = [:]
    private var indexesByIdentity: [IdentityKey: MDB_dbi] = [:]

    /// Handles with only the metadata database open.
    init(metadata: MDB_dbi) {
        self.metadata = metadata
    }

    /// The members database of `relationship`.
    func members(of relationship: RelationshipDescription) -> MDB_dbi? {
        memberReadsByIdentity[IdentityKey(relationship)]?.dbi ?? members[LMDBLayout.key(relationship)]
    }

    /// The members database of `relationship` with the codes its entries may name, for reading.
    func memberRead(of relationship: RelationshipDescription, layout: LMDBLayout) -> MemberRead? {
        if let read = memberReadsByIdentity[IdentityKey(relationship)] { return read }
        guard let dbi = members[LMDBLayout.key(relationship)] else { return nil }
        return MemberRead(dbi: dbi, allowed: layout.codes(of: layout.model.destinationEntity(of: relationship), includesSubentities: true))
    }

    /// The reverse (member → owners) database of `relationship`, kept when it has no inverse.
    func owners(of relationship: RelationshipDescription) -> MDB_dbi? {
        ownersByIdentity[IdentityKey(relationship)] ?? owners[LMDBLayout.key(relationship)]
    }

    /// The index database of `attribute`.
    func index(of attribute: AttributeDescription) -> MDB_dbi? {
        indexesByIdentity[IdentityKey(attribute)] ?? indexes[LMDBLayout.key(attribute)]
    }

    /// These handles, also findable by the identity of every description in `model` (inherited
    /// properties are separate descriptions with the declaring entity's key).
    func resolvingIdentities(in layout: LMDBLayout) -> LMDBHandles {
        var resolved = self
        let model = layout.model
        for entity in model.entities {
            for relationship in entity.relationships {
                let key = LMDBLayout.key(relationship)
                if let dbi = members[key] {
                    let allowed = layout.codes(of: model.destinationEntity(of: relationship), includesSubentities: true)
                    resolved.memberReadsByIdentity[IdentityKey(relationship)] = MemberRead(dbi: dbi, allowed: allowed)
                }
                if let dbi = owners[key] { resolved.ownersByIdentity[IdentityKey(relationship)] = dbi }
            }
            for attribute in entity.attributes {
                if let dbi = indexes[LMDBLayout.key(attribute)] { resolved.indexesByIdentity[IdentityKey(attribute)] = dbi }
            }
        }
        return resolved
    }

    /// Opens (creating) every database of `layout` in the write transaction `txn`.
    static func open(_ layout: LMDBLayout, metadata: MDB_dbi, in txn: LMDBTransaction) throws -> LMDBHandles {
        let environment = txn.environment
        func open(_ name: String, duplicates: Bool) throws -> MDB_dbi {
            try environment.database(name, in: txn, create: true, duplicates: duplicates)!
        }
        var handles = LMDBHandles(metadata: metadata)
        for database in layout.databases {
            switch database {
            case .rows(let root): handles.rows[root] = try open(database.name, duplicates: false)
            case .members(let relationship): handles.members[LMDBLayout.key(relationship)] = try open(database.name, duplicates: true)
            case .owners(let relationship): handles.owners[LMDBLayout.key(relationship)] = try open(database.name, duplicates: true)
            case .index(let key, _): handles.indexes[key] = try open(database.name, duplicates: true)
            }
        }
        return handles
    }
}
