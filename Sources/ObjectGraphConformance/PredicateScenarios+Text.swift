import Foundation
import ObjectGraph

/// Non-ASCII text in string predicates. The rules every store must follow are those of
/// ``TextFolding`` and the shared evaluator:
///
/// - Strings compare by canonical equivalence: precomposed "é" (U+00E9) equals "e" + U+0301.
/// - String operators (BEGINSWITH, ENDSWITH, CONTAINS, LIKE) work on whole characters (extended
///   grapheme clusters): "é" does not begin with "e", an emoji with a skin tone or a ZWJ family
///   is one character, and a flag is never found across two neighbouring flags.
/// - `[c]` is Unicode full case folding ("ß" ≡ "ss", "ﬁ" ≡ "fi", final "ς" ≡ "σ"), `[d]` removes
///   combining marks after canonical decomposition; both are locale-independent, so Turkish
///   dotless "ı" folds only to itself and "İ" folds to "i" + U+0307 (which `[d]` turns into "i").
/// - `x LIKE[opts] p` compares the folded text with the folded pattern: without wildcards it
///   is exactly `x ==[opts] p`, and `?` is one character of the folded text.
/// - MATCHES is an ICU regular expression over the stored Unicode scalars: `.` is one scalar,
///   `\X` one character.
extension PredicateScenarios {
    static let text: [ConformanceScenario] = [
        ConformanceScenario("predicates.text.accentsWithCaseAndDiacriticOptions") { env in
            let rows = try Fixture.strings(env, ["é", "e", "É", "E", "café", "CAFE", "Cafe", "cafés au lait"])
            try rows.expect("string == 'é'", rows: [0], "no options: exact")
            try rows.expect("string ==[c] 'é'", rows: [0, 2], "[c]: É folds to é")
            try rows.expect("string ==[c] 'e'", rows: [1, 3], "[c] keeps the accent")
            try rows.expect("string ==[d] 'é'", rows: [0, 1], "[d]: é folds to e, case still counts")
            try rows.expect("string ==[d] 'E'", rows: [2, 3])
            try rows.expect("string ==[cd] 'É'", rows: [0, 1, 2, 3], "[cd]: all four")
            try rows.expect("string IN[cd] {'E'}", rows: [0, 1, 2, 3], "IN takes options too")
            try rows.expect("string BEGINSWITH 'café'", rows: [4, 7])
            try rows.expect("string BEGINSWITH[c] 'CAF'", rows: [4, 5, 6, 7])
            try rows.expect("string BEGINSWITH[cd] 'CAFÉ'", rows: [4, 5, 6, 7])
            try rows.expect("string ENDSWITH[c] 'É'", rows: [0, 2, 4])
            try rows.expect("string ENDSWITH[d] 'e'", rows: [0, 1, 4, 6], "[d] leaves case alone: CAFE and É do not end with e")
            try rows.expect("string CONTAINS 'é'", rows: [0, 4, 7])
            try rows.expect("string CONTAINS[d] 'é'", rows: [0, 1, 4, 6, 7], "the needle is folded too")
            try rows.expect("string CONTAINS[cd] 'FE'", rows: [4, 5, 6, 7])
            try rows.expect("string LIKE[cd] 'cafe*'", rows: [4, 5, 6, 7])
            try rows.expect("string LIKE[c] 'CAFÉ'", rows: [4])
            try rows.expect("string LIKE[d] '?afe'", rows: [4, 6])
            try rows.expect("string < 'f'", rows: [1, 3, 4, 5, 6, 7], "natural order is by Unicode scalar: é and É sort after f")
            try rows.expect("string <[cd] 'f'", rows: [0, 1, 2, 3, 4, 5, 6, 7], "folded, they sort before it")
            try rows.expect("string MATCHES[c] 'É'", rows: [0, 2])
            try rows.expect("string MATCHES[d] 'e'", rows: [0, 1], "[d] folds text and pattern before matching")
        },
        ConformanceScenario("predicates.text.fullCaseFolding") { env in
            let rows = try Fixture.strings(env, ["straße", "STRASSE", "strasse", "Straße", "ﬁle", "FILE", "ΣΑΣ", "σας", "Maße", "MASSE"])
            try rows.expect("string == 'strasse'", rows: [2], "no options: ß is not ss")
            try rows.expect("string ==[c] 'STRASSE'", rows: [0, 1, 2, 3], "ß folds to ss")
            try rows.expect("string ==[c] 'straße'", rows: [0, 1, 2, 3], "whichever side holds the ß")
            try rows.expect("string BEGINSWITH[c] 'STRAS'", rows: [0, 1, 2, 3], "a prefix ending inside the folded ß")
            try rows.expect("string ENDSWITH[c] 'SSE'", rows: [0, 1, 2, 3, 8, 9])
            try rows.expect("string CONTAINS 'ß'", rows: [0, 3, 8])
            try rows.expect("string CONTAINS[c] 'ß'", rows: [0, 1, 2, 3, 8, 9])
            try rows.expect("string ==[c] 'file'", rows: [4, 5], "the ﬁ ligature folds to fi")
            try rows.expect("string BEGINSWITH[c] 'fi'", rows: [4, 5])
            try rows.expect("string ==[c] 'σασ'", rows: [6, 7], "capital and final sigma fold to σ")
            try rows.expect("string LIKE[c] 'STRASSE'", rows: [0, 1, 2, 3], "LIKE[c] without wildcards is ==[c]")
            try rows.expect("string LIKE[c] 'stra*e'", rows: [0, 1, 2, 3])
            try rows.expect("string LIKE[c] 'ma??e'", rows: [8, 9], "? matches one character of the folded text: Maße folds to masse")
            try rows.expect("string MATCHES[c] 'strasse'", rows: [0, 1, 2, 3], "ICU's case-insensitive matching folds ß in literal text")
        },
        ConformanceScenario("predicates.text.turkishDotlessI") { env in
            // ı U+0131, İ U+0130. Locale-independent folding: I ↔ i, ı only itself, İ → i + U+0307.
            let rows = try Fixture.strings(env, ["ı", "I", "i", "İ", "kırmızı", "KIRMIZI", "kirmizi", "İstanbul", "ISTANBUL", "istanbul"])
            try rows.expect("string ==[c] 'i'", rows: [1, 2], "I folds to i, not to ı; İ keeps its dot")
            try rows.expect("string ==[c] 'I'", rows: [1, 2])
            try rows.expect("string ==[c] 'ı'", rows: [0], "dotless ı folds only to itself")
            try rows.expect("string ==[c] 'İ'", rows: [3])
            try rows.expect("string ==[cd] 'i'", rows: [1, 2, 3], "[d] removes İ's dot")
            try rows.expect("string ==[d] 'I'", rows: [1, 3])
            try rows.expect("string ==[cd] 'ı'", rows: [0], "ı has no mark to remove")
            try rows.expect("string ==[c] 'KIRMIZI'", rows: [5, 6], "KIRMIZI folds to kirmizi, not kırmızı")
            try rows.expect("string ==[c] 'kırmızı'", rows: [4])
            try rows.expect("string ==[c] 'istanbul'", rows: [8, 9])
            try rows.expect("string ==[cd] 'istanbul'", rows: [7, 8, 9])
            try rows.expect("string BEGINSWITH[c] 'i'", rows: [1, 2, 8, 9], "the folded İ is i with a combining dot: another character")
            try rows.expect("string BEGINSWITH[cd] 'i'", rows: [1, 2, 3, 7, 8, 9])
            try rows.expect("string CONTAINS[c] 'I'", rows: [1, 2, 5, 6, 8, 9])
            try rows.expect("string LIKE[c] 'k?rm?z?'", rows: [4, 5, 6])
            try rows.expect("string LIKE[c] 'i*'", rows: [1, 2, 8, 9])
        },
        ConformanceScenario("predicates.text.canonicalEquivalence") { env in
            // 0/1: é precomposed and decomposed; 2/3: résumé both ways; 6/7/8: Å as U+00C5, A + U+030A
            // and the Ångström sign U+212B (canonically equivalent to U+00C5).
            let rows = try Fixture.strings(env, ["é", "e\u{301}", "résumé", "re\u{301}sume\u{301}", "e", "resume", "Å", "A\u{30A}", "\u{212B}"])
            try rows.expect("string == 'é'", rows: [0, 1])
            try rows.expect("string == %@", "e\u{301}", rows: [0, 1], "a decomposed constant")
            try rows.expect("string == 'résumé'", rows: [2, 3])
            try rows.expect("string != 'é'", rows: [2, 3, 4, 5, 6, 7, 8])
            try rows.expect("string IN {'é', 'Å'}", rows: [0, 1, 6, 7, 8])
            try rows.expect("string == %@", "\u{212B}", rows: [6, 7, 8], "the Ångström sign is Å")
            try rows.expect("string BEGINSWITH 'ré'", rows: [2, 3])
            try rows.expect("string BEGINSWITH 're'", rows: [5], "é is one character, whether or not it is decomposed")
            try rows.expect("string ENDSWITH 'mé'", rows: [2, 3])
            try rows.expect("string ENDSWITH %@", "\u{301}", rows: [], "a lone combining mark is no character of the text")
            try rows.expect("string CONTAINS 'sumé'", rows: [2, 3])
            try rows.expect("string CONTAINS 'e'", rows: [4, 5])
            try rows.expect("string CONTAINS %@", "\u{301}", rows: [])
            try rows.expect("string LIKE 'résumé'", rows: [2, 3], "LIKE without wildcards is ==")
            try rows.expect("string LIKE 'r?sum?'", rows: [2, 3, 5])
            try rows.expect("string LIKE '?'", rows: [0, 1, 4, 6, 7, 8])
            try rows.expect("string ==[d] 'resume'", rows: [2, 3, 5])
            try rows.expect("string ==[d] 'A'", rows: [6, 7, 8])
            try rows.expect("string >= 'é'", rows: [0, 1], "a decomposed string sorts as its precomposed form")
            try rows.expect("string MATCHES 'r.sum.'", rows: [2, 5], "MATCHES: '.' is one Unicode scalar")
            try rows.expect("string MATCHES %@", "r\\Xsum\\X", rows: [2, 3, 5], "\\X is one character")
        },
        ConformanceScenario("predicates.text.orderAcrossNormalizationForms") { env in
            // Natural order is the Unicode scalar order of the canonical composition, whatever
            // form a string is stored in: "é" decomposed is a prefix of "é1", so it sorts first.
            let rows = try Fixture.strings(env, ["e\u{301}", "\u{E9}1", "\u{E9}e", "e\u{301}z", "e", "f", "\u{E9}"])
            try rows.expect("string > 'é1'", rows: [2, 3], "é < é1 < ée < éz")
            try rows.expect("string < %@", "\u{E9}e", rows: [0, 1, 4, 5, 6])
            try rows.expect("string < %@", "e\u{301}e", rows: [0, 1, 4, 5, 6], "the constant's form does not matter either")
            try rows.expect("string BETWEEN {'é', 'é1'}", rows: [0, 1, 6])
            try rows.expect("string >= %@", "e\u{301}", rows: [0, 1, 2, 3, 6])
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string")], [4, 5, 0, 6, 1, 2, 3], "sorted: e, f, é (both forms, by primary key), é1, ée, éz")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", ascending: false)], [3, 2, 1, 0, 6, 5, 4], "and descending")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", comparison: .caseInsensitive)], [4, 5, 0, 6, 1, 2, 3], "case-insensitive")
        },
        ConformanceScenario("predicates.text.emoji") { env in
            // 1: 👍 + skin tone U+1F3FD; 2: man ZWJ woman ZWJ girl; 5: two flags; 6: woman ZWJ laptop.
            let rows = try Fixture.strings(env, ["👍", "👍🏽", "👨‍👩‍👧", "👨", "hi 👋🏿 there", "🇩🇪🇫🇷", "👩‍💻 coder", "ok👍", "👩"])
            try rows.expect("string == '👍'", rows: [0])
            try rows.expect("string == '👍🏽'", rows: [1])
            try rows.expect("string BEGINSWITH '👍'", rows: [0], "👍🏽 is another character than 👍")
            try rows.expect("string CONTAINS '👍'", rows: [0, 7])
            try rows.expect("string ENDSWITH '👍'", rows: [0, 7])
            try rows.expect("string CONTAINS %@", "\u{1F3FD}", rows: [], "a skin-tone modifier alone is no character of 👍🏽")
            try rows.expect("string CONTAINS '👨'", rows: [3], "the man inside a ZWJ family is not a character of it")
            try rows.expect("string CONTAINS '👩'", rows: [8], "nor is the woman of 👩‍💻")
            try rows.expect("string CONTAINS '👨‍👩‍👧'", rows: [2])
            try rows.expect("string CONTAINS '🇪🇫'", rows: [], "no flag is found across 🇩🇪 and 🇫🇷")
            try rows.expect("string CONTAINS '🇫🇷'", rows: [5])
            try rows.expect("string BEGINSWITH '🇩🇪'", rows: [5])
            try rows.expect("string ENDSWITH '🇫🇷'", rows: [5])
            try rows.expect("string LIKE '?'", rows: [0, 1, 2, 3, 8], "? is one character, however many scalars")
            try rows.expect("string LIKE '??'", rows: [5])
            try rows.expect("string LIKE '*👋🏿*'", rows: [4])
            try rows.expect("string LIKE '👩‍💻*'", rows: [6])
            try rows.expect("string CONTAINS[cd] '👋🏿'", rows: [4], "folding leaves emoji alone")
            try rows.expect("string BEGINSWITH[c] '👩‍💻 C'", rows: [6])
            try rows.expect("string LIKE[c] 'HI * THERE'", rows: [4])
            try rows.expect("string ==[cd] 'OK👍'", rows: [7])
            try rows.expect("string MATCHES %@", "\\X", rows: [0, 1, 2, 3, 8])
        },
        ConformanceScenario("predicates.text.likeAndMatchesRules") { env in
            let rows = try Fixture.strings(env, ["a*b?c", "aXbYc", "abc", "a.b", "axb", "multi\nline", "(paren)", "back\\slash", "100%", "a", "a_b"])
            try rows.expect("string LIKE 'a*b?c'", rows: [0, 1], "* any run, ? one character")
            try rows.expect("string LIKE 'a.b'", rows: [3], "regex characters are literal in LIKE")
            try rows.expect("string LIKE 'a?b'", rows: [3, 4, 10])
            try rows.expect("string LIKE 'multi*'", rows: [5], "* spans newlines")
            try rows.expect("string LIKE '(*)'", rows: [6])
            try rows.expect("string LIKE 'back*'", rows: [7])
            try rows.expect("string LIKE '*%'", rows: [8], "% is literal, not SQL's wildcard")
            try rows.expect("string LIKE 'a_b'", rows: [10], "_ is literal, not SQL's wildcard")
            try rows.expect("string LIKE '?'", rows: [9])
            try rows.expect("string LIKE[c] 'A*'", rows: [0, 1, 2, 3, 4, 9, 10])
            try rows.expect("string LIKE %@", "a\\*b\\?c", rows: [0], "a backslash makes a wildcard literal")
            try rows.expect("string LIKE 'a\\\\*b*'", rows: [0], "also escaped in the format string")
            try rows.expect("string LIKE %@", "back\\\\slash", rows: [7], "an escaped backslash is one backslash")
            try rows.expect("string LIKE %@", "back\\slash", rows: [], "a backslash before another character escapes it")
            try rows.expect("string LIKE %@", "a\\", rows: [], "a backslash ending the pattern is itself")
            try rows.expect("string LIKE %@", "a\\_b", rows: [10])
            try rows.expect("string MATCHES 'a.b'", rows: [3, 4, 10])
            try rows.expect("string MATCHES %@", "a\\.b", rows: [3])
            try rows.expect("string MATCHES 'a\\\\.b'", rows: [3], "a backslash escaped in the format string")
            try rows.expect("string MATCHES 'multi.line'", rows: [], "'.' does not match a newline")
            try rows.expect("string MATCHES '(?s)multi.line'", rows: [5], "unless (?s) says so")
            try rows.expect("string MATCHES '[0-9]+%'", rows: [8])
            try rows.expect("string MATCHES 'a|abc'", rows: [2, 9], "each alternative must match the whole string")
            try rows.expect("string MATCHES %@", "\\(paren\\)", rows: [6])
            // Not regular expressions by themselves, though wrapped to match the whole string
            // they would be (`\A(?:a)|(.*)\z` matched every row): refused, as '([' is.
            try rows.expectInvalid("string MATCHES %@", "a)|(.*")
            try rows.expectInvalid("string MATCHES %@", "x)(a")
            try rows.expectInvalid("string MATCHES[c] 'a)|(b'")
        },
    ]
}
