//! Snapshot tests of `spillway import` and `spillway export` with mongoimport's and
//! mongoexport's flags, run as the real binary against small files the tests write; and
//! round trips (export, then import) for JSON, CSV and TSV.
//!
//! Each test is a transcript: the command lines, what they printed (timings redacted),
//! their exit codes, and the documents they left, printed by the shell as mongosh would.

use std::fmt::Write as _;
use std::path::Path;

use crate::common;

use common::{spillway, stderr, stdout};

/// A directory with a database in `db`, and the transcript of what ran in it.
struct Lab {
    directory: tempfile::TempDir,
    transcript: String,
}

impl Lab {
    fn new() -> Lab {
        Lab {
            directory: tempfile::tempdir().unwrap(),
            transcript: String::new(),
        }
    }

    fn path(&self) -> &Path {
        self.directory.path()
    }

    /// Writes `name` in the directory and shows it in the transcript.
    fn file(&mut self, name: &str, text: &str) -> &mut Lab {
        std::fs::write(self.path().join(name), text).unwrap();
        writeln!(self.transcript, "--- {name}\n{text}---").unwrap();
        self
    }

    /// Runs `spillway args...` and adds the command, its output and its exit code.
    fn run(&mut self, args: &[&str]) -> &mut Lab {
        let output = spillway(args, self.path());
        let shown: Vec<String> = args.iter().map(|arg| quote(arg)).collect();
        writeln!(self.transcript, "$ spillway {}", shown.join(" ")).unwrap();
        self.transcript.push_str(&redact_seconds(&stdout(&output)));
        self.transcript.push_str(&redact_seconds(&stderr(&output)));
        writeln!(
            self.transcript,
            "[exit {}]\n",
            output.status.code().unwrap()
        )
        .unwrap();
        self
    }

    /// Runs shell statements on the database, read-only, into the transcript.
    fn shell(&mut self, statements: &str) -> &mut Lab {
        std::fs::write(self.path().join("show.js"), statements).unwrap();
        let output = spillway(&["run", "--read-only", "db", "show.js"], self.path());
        assert!(output.status.success(), "{}", stderr(&output));
        writeln!(self.transcript, "> {}", statements.trim()).unwrap();
        self.transcript.push_str(&stdout(&output));
        self.transcript.push('\n');
        self
    }

    /// The documents of `collection`, in `_id` order.
    fn show(&mut self, collection: &str) -> &mut Lab {
        self.shell(&format!(
            "db.{collection}.find().sort({{_id: 1}}).toArray()"
        ))
    }

    /// The documents of `collection` without their generated `_id`s.
    fn show_without_ids(&mut self, collection: &str) -> &mut Lab {
        self.shell(&format!("db.{collection}.find({{}}, {{_id: 0}}).toArray()"))
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap()
    }
}

fn quote(arg: &str) -> String {
    if arg.is_empty() || arg.contains([' ', '{', '}', '(', ')', '$', '\'', ',', '"']) {
        format!("'{arg}'")
    } else {
        arg.to_owned()
    }
}

/// `in 0.01 s` becomes `in [t] s`: timings differ from run to run.
fn redact_seconds(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(" in ") {
        let after = &rest[start + 4..];
        let number = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count();
        out.push_str(&rest[..start + 4]);
        if number > 0 && after[number..].starts_with(" s") {
            out.push_str("[t]");
            rest = &after[number..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn json_is_a_stream_of_documents_or_an_array() {
    let mut lab = Lab::new();
    lab.file(
        "books.json",
        "{\"_id\": 1, \"title\": \"Invisible Cities\", \"n\": {\"$numberLong\": \"5\"}}\n{\n\t\"_id\": 2,\n\t\"tags\": [\"a\", \"b\"]\n}\n\n{\"_id\": 3, \"added\": {\"$date\": \"2024-01-01T00:00:00Z\"}}\n",
    )
    .run(&["import", "db", "books", "books.json"])
    .show("books")
    .file("array.json", "[\n  {\"_id\": 10},\n  {\"_id\": 11}\n]\n")
    .run(&["import", "db", "books", "array.json", "--jsonArray"])
    .file("stream.txt", "{\"_id\": 20}\n{\"_id\": 21}\n")
    .run(&["import", "--db", "db", "-c", "more", "--file", "stream.txt", "--type", "json"])
    .run(&["import", "db", "more", "stream.txt", "--type", "json", "--jsonArray"])
    .run(&["import", "db", "more", "array.json", "--format", "ndjson"])
    .run(&["import", "db", "more", "array.json", "--type", "csv", "--jsonArray"])
    .run(&["import", "db", "more", "stream.txt", "--headerline", "--type", "json"])
    .show("more");
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn where_the_database_collection_and_file_come_from() {
    let mut lab = Lab::new();
    lab.file("shelf.json", "{\"_id\": 1}\n")
        // mongoimport's habit: the collection is the file's name.
        .run(&["import", "-d", "db", "shelf.json"])
        .run(&[
            "import",
            "db",
            "--file",
            "shelf.json",
            "--collection",
            "other",
        ])
        .run(&["import", "--file", "shelf.json", "db", "third"])
        .run(&["import", "db", "a", "b", "shelf.json"])
        .run(&["import", "db"])
        .run(&["import", "--collection", "c", "shelf.json"])
        .run(&["import", "db", "c", "missing.json"])
        .shell("show collections");
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn csv_field_names_from_the_header_fields_or_a_field_file() {
    let mut lab = Lab::new();
    lab.file(
        "people.csv",
        "_id,name,address.city\n1,Ada,London\n2,\"Hopper, Grace\",\"New York\"\n3,bad\"quote,Paris\n4,too,many,fields\n",
    )
    .run(&["import", "db", "people", "people.csv", "--headerline"])
    .show("people")
    .file("rows.csv", "5,Lin,Paris\n6,Mo,\n")
    .run(&["import", "db", "people", "rows.csv", "--fields", "_id,name,address.city"])
    .file("names.txt", "_id\nname\n\naddress.city\n")
    .run(&["import", "db", "again", "rows.csv", "--fieldFile", "names.txt", "--ignoreBlanks"])
    .show("people")
    .show("again")
    .run(&["import", "db", "x", "rows.csv", "--fields", "a,b", "--headerline"])
    .run(&["import", "db", "x", "rows.csv", "--fields", "a,a.b,c"])
    .run(&["import", "db", "x", "rows.csv", "--fields", "a,$b,c"])
    .file("empty.csv", "")
    .run(&["import", "db", "x", "empty.csv"]);
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn columns_have_types_with_mongoimports_type_names() {
    let mut lab = Lab::new();
    lab.file(
        "typed.csv",
        "_id.int32(),name.string(),big.int64(),price.decimal(),ratio.double(),ok.boolean(),\"born.date(Jan 2, 2006)\",at.date_go(2006-01-02T15:04:05Z07:00),ms.date_ms(dd/MM/yyyy),ora.date_oracle(YYYY-MM-DD HH24:MI),raw.binary(hex),b64.binary(base64),any.auto()\n1,Ada,9007199254740993,12.50,0.25,true,\"Dec 10, 1815\",2024-01-01T10:00:00+02:00,31/12/1999,2000-01-02 03:04,00ff,Zm9v,7\n2,Lin,5,0.1,1e3,0,\"Jan 1, 2000\",2024-06-30T23:59:59Z,01/01/2000,2000-01-02 23:59,,,x\n",
    )
    .run(&["import", "db", "typed", "typed.csv", "--columnsHaveTypes"])
    .show("typed")
    .file("grace.csv", "_id.int32(),n.int32(),d.date(2006-01-02)\n1,1,2024-01-01\n2,two,2024-01-02\n3,3,yesterday\n4,4,2024-01-04\n")
    .run(&["import", "db", "stop", "grace.csv", "--columnsHaveTypes"])
    .run(&["import", "db", "skiprow", "grace.csv", "--columnsHaveTypes", "--parseGrace", "skipRow"])
    .run(&["import", "db", "skipfield", "grace.csv", "--columnsHaveTypes", "--parseGrace", "skipField"])
    .run(&["import", "db", "autocast", "grace.csv", "--columnsHaveTypes", "--parseGrace", "autoCast"])
    .show("stop")
    .show("skiprow")
    .show("skipfield")
    .show("autocast")
    .file("bad.csv", "n.int(),m\n1,2\n")
    .run(&["import", "db", "bad", "bad.csv", "--columnsHaveTypes"])
    .run(&["import", "db", "bad", "bad.csv", "--fields", "n.int32(),m", "--columnsHaveTypes"])
    .run(&["import", "db", "bad", "bad.csv", "--fields", "n.int32(),d.date(01/02)", "--columnsHaveTypes"])
    .run(&["import", "db", "bad", "bad.csv", "--parseGrace", "skipRow"])
    .run(&["import", "db", "bad", "bad.csv", "--types", "--columnsHaveTypes"]);
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn auto_types_are_the_same_in_every_row_of_a_column() {
    let mut lab = Lab::new();
    lab.file(
        "places.csv",
        "city,zip,population,area,capital\nBoston,02134,650000,125.4,true\nNew York,10001,8300000,783,false\nNowhere,99999,,0.5,true\n",
    )
    .run(&["import", "db", "places", "places.csv", "--types"])
    .show_without_ids("places")
    .run(&["import", "db", "plain", "places.csv"])
    .shell("db.plain.findOne({}, {_id: 0})");
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn tsv_is_read_and_written_with_tabs() {
    let mut lab = Lab::new();
    lab.file(
        "rows.tsv",
        "_id.int32()\tname.string()\tnote.string()\r\n1\tAda\tsays \"hi\", twice\r\n2\tLin\t\r\n",
    )
    .run(&["import", "db", "rows", "rows.tsv", "--columnsHaveTypes"])
    .show("rows")
    .run(&[
        "export",
        "db",
        "rows",
        "--type",
        "tsv",
        "--fields",
        "_id,name,note",
    ])
    .file("tab.json", "{\"_id\": 3, \"note\": \"a\\tb\"}\n")
    .run(&["import", "db", "rows", "tab.json"])
    .run(&["export", "db", "rows", "--type", "tsv", "-f", "_id,note"]);
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn modes_insert_upsert_merge_and_delete() {
    let mut lab = Lab::new();
    lab.file(
        "first.json",
        "{\"_id\": 1, \"name\": \"Ada\", \"city\": \"London\"}\n{\"_id\": 2, \"name\": \"Lin\", \"city\": \"Paris\"}\n{\"name\": \"No id\", \"city\": \"Rome\"}\n",
    )
    .run(&["import", "db", "people", "first.json"])
    .file(
        "second.json",
        "{\"_id\": 1, \"name\": \"Ada Lovelace\"}\n{\"_id\": 3, \"name\": \"Mo\", \"city\": \"Oslo\"}\n",
    )
    .run(&["import", "db", "people", "second.json", "--mode", "insert"])
    .run(&["import", "db", "people", "second.json", "--mode", "upsert"])
    .show_without_ids("people")
    .file(
        "merge.json",
        "{\"_id\": 2, \"age\": 40}\n{\"_id\": 3, \"name\": \"Mo\", \"city\": \"Oslo\"}\n{\"_id\": 4, \"name\": \"Kim\"}\n",
    )
    .run(&["import", "db", "people", "merge.json", "--mode", "merge"])
    .show_without_ids("people")
    .file(
        "by_name.json",
        "{\"name\": \"No id\", \"city\": \"Milan\"}\n{\"name\": \"Kim\", \"age\": 30}\n",
    )
    .run(&["import", "db", "people", "by_name.json", "--upsertFields", "name"])
    .show_without_ids("people")
    .file(
        "gone.json",
        "{\"_id\": 1}\n{\"_id\": 99}\n{\"name\": \"Kim\"}\n",
    )
    .run(&["import", "db", "people", "gone.json", "--mode", "delete"])
    .run(&["import", "db", "people", "gone.json", "--mode", "delete", "--upsertFields", "name"])
    .show_without_ids("people")
    .run(&["import", "db", "people", "gone.json", "--mode", "insert", "--upsertFields", "name"])
    .run(&["import", "db", "people", "gone.json", "--mode", "sideways"]);
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn repeated_rejections_are_summarised_and_drop_starts_afresh() {
    let mut lab = Lab::new();
    let mut lines = String::new();
    for id in 0..25 {
        writeln!(lines, "{{\"_id\": {id}}}").unwrap();
    }
    lines.push_str("{\"_id\": oops}\n[1]\n");
    lab.file("many.json", &lines)
        .run(&["import", "db", "many", "many.json"])
        .run(&["import", "db", "many", "many.json", "--batch-size", "7"])
        .run(&[
            "import",
            "db",
            "many",
            "many.json",
            "--drop",
            "--stop-on-error",
        ])
        .shell("db.many.countDocuments()")
        .file("good.json", "{\"_id\": 100}\n{\"_id\": 101}\n")
        .run(&[
            "import",
            "db",
            "many",
            "good.json",
            "--drop",
            "--stopOnError",
        ])
        .shell("db.many.find().toArray()")
        .run(&[
            "import",
            "db",
            "many",
            "good.json",
            "--drop",
            "--batchSize",
            "1",
        ])
        .shell("db.many.countDocuments()");
    insta::assert_snapshot!(lab.transcript);
}

#[test]
fn export_flags() {
    let mut lab = Lab::new();
    lab.file(
        "books.json",
        "{\"_id\": 1, \"title\": \"Invisible Cities\", \"year\": 1972, \"price\": {\"value\": 12.5}, \"added\": {\"$date\": \"2024-01-01T10:00:00Z\"}}\n{\"_id\": 2, \"title\": \"Dune, Messiah\", \"year\": 1969, \"tags\": [\"sf\"]}\n{\"_id\": 3, \"title\": \"The Wooden Amulet\", \"year\": 2023, \"big\": {\"$numberLong\": \"5\"}}\n",
    )
    .run(&["import", "db", "books", "books.json"])
    .run(&["export", "db", "books", "-q", "{year: {$gt: 1970}}", "--sort", "{year: -1}"])
    .run(&["export", "-d", "db", "-c", "books", "--fields", "title,price.value", "--skip", "1", "--limit", "1"])
    .run(&["export", "db", "books", "--type", "csv", "-f", "_id,title,price.value,added,tags,missing"])
    .file("fields.txt", "title\nyear\n")
    .run(&["export", "db", "books", "--type", "csv", "--fieldFile", "fields.txt", "--noHeaderLine", "--query", "{_id: 2}"])
    .run(&["export", "db", "books", "--pretty", "--jsonArray", "--limit", "2"])
    .run(&["export", "db", "books", "--jsonFormat", "canonical", "-q", "{_id: 3}"])
    .run(&["export", "db", "books", "--type", "json", "--out", "out.json", "--limit", "1"]);
    let written = lab.read("out.json");
    writeln!(lab.transcript, "--- out.json\n{written}---").unwrap();
    lab.run(&["export", "db", "books", "--type", "csv"])
        .run(&[
            "export", "db", "books", "--type", "csv", "-f", "title", "--pretty",
        ])
        .run(&["export", "db", "books", "--noHeaderLine"])
        .run(&["export", "db", "books", "--sort", "{year: "])
        .run(&["export", "db", "books", "--limit", "0"])
        .run(&["export", "nowhere", "books"])
        .run(&["export", "db"]);
    insta::assert_snapshot!(lab.transcript);
}

/// The documents of a collection as the shell prints them, for comparisons.
fn find_all(lab: &Lab, collection: &str) -> String {
    std::fs::write(
        lab.path().join("all.js"),
        format!("db.{collection}.find().sort({{_id: 1}}).toArray()"),
    )
    .unwrap();
    let output = spillway(&["run", "--read-only", "db", "all.js"], lab.path());
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

fn ok(lab: &Lab, args: &[&str]) {
    let output = spillway(args, lab.path());
    assert!(
        output.status.success(),
        "{args:?}: {}{}",
        stdout(&output),
        stderr(&output)
    );
}

#[test]
fn json_csv_and_tsv_round_trip() {
    let mut lab = Lab::new();
    lab.file(
        "seed.js",
        "db.books.insertMany([
  { _id: 1, title: 'Invisible Cities', year: 1972, big: NumberLong(9007199254740993), price: Decimal128('12.50'),
    ratio: 0.25, available: true, added: ISODate('2024-01-01T10:00:00.125Z'), nested: { city: 'Turin' }, tags: ['a', 'b'] },
  { _id: 2, title: 'Dune, \"the\" novel', year: 1965, big: NumberLong(5), price: Decimal128('7'),
    ratio: 1.5, available: false, added: ISODate('1999-12-31T23:59:59Z'), nested: { city: 'New York' }, tags: [] }
])",
    );
    ok(&lab, &["run", "db", "seed.js"]);
    let original = find_all(&lab, "books");

    // JSON, canonical: every type comes back, one document per line, pretty, and as an array.
    for (name, extra) in [
        ("lines.json", vec![]),
        ("pretty.json", vec!["--pretty"]),
        ("array.json", vec!["--jsonArray"]),
        ("pretty_array.json", vec!["--jsonArray", "--pretty"]),
    ] {
        let mut args = vec![
            "export",
            "db",
            "books",
            "--jsonFormat",
            "canonical",
            "-o",
            name,
        ];
        args.extend(extra);
        ok(&lab, &args);
        let copy = format!("copy_{}", name.trim_end_matches(".json"));
        ok(&lab, &["import", "db", &copy, name]);
        assert_eq!(find_all(&lab, &copy), original, "{name}");
    }

    // CSV and TSV: the types come back through --columnsHaveTypes (nested documents and
    // arrays are columns of their own fields).
    let fields = "_id,title,year,big,price,ratio,available,added,nested.city";
    let typed = "_id.int32(),title.string(),year.int32(),big.int64(),price.decimal(),ratio.double(),available.boolean(),added.date(2006-01-02T15:04:05.000Z07:00),nested.city.string()";
    for (kind, file) in [("csv", "books.csv"), ("tsv", "books.tsv")] {
        // With its header line, the file imports back under --headerline as strings.
        ok(
            &lab,
            &[
                "export", "db", "books", "--type", kind, "-f", fields, "-o", file,
            ],
        );
        let plain = format!("plain_{kind}");
        ok(&lab, &["import", "db", &plain, file, "--headerline"]);
        let strings = find_all(&lab, &plain);
        assert!(strings.contains("'Dune, \"the\" novel'"), "{strings}");
        assert!(
            strings.contains("added: '2024-01-01T10:00:00.125Z'"),
            "{strings}"
        );
        let without_header = format!("{kind}_data");
        ok(
            &lab,
            &[
                "export",
                "db",
                "books",
                "--type",
                kind,
                "-f",
                fields,
                "--noHeaderLine",
                "-o",
                &without_header,
            ],
        );
        let exact = format!("exact_{kind}");
        ok(
            &lab,
            &[
                "import",
                "db",
                &exact,
                &without_header,
                "--type",
                kind,
                "--fields",
                typed,
                "--columnsHaveTypes",
            ],
        );
        let expected = original
            .replace("tags: [ 'a', 'b' ]", "")
            .replace("tags: []", "");
        let copied = find_all(&lab, &exact);
        assert_eq!(normalise(&copied), normalise(&expected), "{kind}: {copied}");
    }
}

/// The shell's printout without the line breaks and spaces that depend on lengths.
fn normalise(printed: &str) -> String {
    printed
        .split_whitespace()
        .collect::<String>()
        .replace(",}", "}")
}
