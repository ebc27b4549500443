//! The `cli_statement` fuzz target's checks on stable Rust: seed statements, every prefix of
//! them, and random byte-level mutations from a fixed-seed generator.

use spillway_cli::shell::fuzzing::check_statement_parser;

const SEEDS: &[&str] = &[
    "db.sales.insertOne({ _id: 1, customers_purchased: ['user00', 'user01'] })",
    "db.collection('products').insertOne( [\n{ _id: ObjectId(\"507f1f77bcf86cd993384520\"), price: { value: Decimal128(\"119.99\") } }\n] )",
    "db.a.find({ x: { $gt: 1 } }, { x: 1 })\n  .sort({ x: -1 }).skip(1).limit(2).explain()",
    "db.a.updateOne({}, { $set: { 'g.$[e].v': 1 } }, { upsert: true, arrayFilters: [{ 'e.v': 2 }] }); show collections",
    "db['a.b'].findOneAndUpdate({}, { $inc: { n: 1 } }, { returnDocument: 'after' }) // c\nit\nhelp\nexit",
    "db.a.find({ r: /[/;(]/i, s: \"\\\"(\", t: '\\'' }) /* ( */ ; db.a.drop()",
];

/// xorshift64*: a fixed sequence, so failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

#[test]
fn seeds_and_their_prefixes() {
    for seed in SEEDS {
        for (end, _) in seed.char_indices() {
            check_statement_parser(&seed[..end]);
        }
        check_statement_parser(seed);
    }
}

/// Inputs the fuzzer found failing, kept as regressions.
#[test]
fn fuzzer_findings() {
    // A lone carriage return: the lexer counted it as a line break, the statement splitter
    // did not, so the error's line fell outside its statement.
    check_statement_parser("[\r\u{e}\r");
    check_statement_parser("db.a.find(\r{ x: 1 \r\n}, @)");
    // A parenthesised member expression closed on the next line: its property's column
    // was computed from the closing parenthesis, below 1.
    check_statement_parser("..;(tzn.rew\n)\n(w");
}

#[test]
fn random_mutations() {
    const ALPHABET: &[u8] = b"{}[]()'\"/\\*.,:;$ \n\r\tdb.a0123456789-+eE_xyz";
    let mut random = Random(0x5eed_cafe_f00d_d00d);
    for _ in 0..20_000 {
        let mut bytes = SEEDS[random.below(SEEDS.len())].as_bytes().to_vec();
        for _ in 0..=random.below(6) {
            let position = random.below(bytes.len() + 1);
            match random.below(3) {
                0 if position < bytes.len() => {
                    bytes.remove(position);
                }
                1 if position < bytes.len() => {
                    bytes[position] = ALPHABET[random.below(ALPHABET.len())];
                }
                _ => bytes.insert(position, ALPHABET[random.below(ALPHABET.len())]),
            }
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            check_statement_parser(text);
        }
    }
}
