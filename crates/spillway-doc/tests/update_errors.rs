//! Snapshots of the messages users see for invalid updates (parse time) and for updates that
//! fail on one document (apply time). One line per case: the input, then the message.

use bson::{DateTime, Document, doc};
use spillway_doc::update::{ApplyContext, Update};

fn parse_error(update: &Document, array_filters: &[Document]) -> String {
    match Update::parse(update, array_filters) {
        Ok(parsed) => panic!("{update} parsed: {parsed:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn invalid_updates() {
    let cases: Vec<(Document, Vec<Document>)> = vec![
        (doc! { "$foo": { "a": 1 } }, vec![]),
        (doc! { "$set": { "a": 1 }, "b": 2 }, vec![]),
        (doc! { "b": 2, "$set": { "a": 1 } }, vec![]),
        (doc! { "$set": 5 }, vec![]),
        (doc! { "$set": { "a": 1, "a.b": 2 } }, vec![]),
        (doc! { "$set": { "a": 1 }, "$inc": { "a": 1 } }, vec![]),
        (
            doc! { "$set": { "a.b.c": 1 }, "$unset": { "a.b": 1 } },
            vec![],
        ),
        (
            doc! { "$rename": { "a": "b" }, "$set": { "b.c": 1 } },
            vec![],
        ),
        (doc! { "$set": { "a.$[]": 1, "a.0": 2 } }, vec![]),
        (
            doc! { "$set": { "a.$[].b": 1 }, "$inc": { "a.$.c": 2 } },
            vec![],
        ),
        (
            doc! { "$set": { "a.$[i].b": 1, "a.x": 2 } },
            vec![doc! { "i": 1 }],
        ),
        (doc! { "$set": { "a..b": 1 } }, vec![]),
        (doc! { "$set": { "": 1 } }, vec![]),
        (doc! { "$set": { "$a": 1 } }, vec![]),
        (doc! { "$set": { "a.$x": 1 } }, vec![]),
        (doc! { "$set": { "$": 1 } }, vec![]),
        (doc! { "$set": { "$[].a": 1 } }, vec![]),
        (doc! { "$set": { "a.$.b.$": 1 } }, vec![]),
        (doc! { "$set": { "a": { "$b": 1 } } }, vec![]),
        (doc! { "$set": { "a": [{ "x": { "$y": 1 } }] } }, vec![]),
        (doc! { "$inc": { "a": "1" } }, vec![]),
        (doc! { "$mul": { "a": null } }, vec![]),
        (doc! { "$rename": { "a": 1 } }, vec![]),
        (doc! { "$rename": { "a": "a" } }, vec![]),
        (doc! { "$rename": { "a": "a.b" } }, vec![]),
        (doc! { "$rename": { "a.b": "a" } }, vec![]),
        (doc! { "$rename": { "a.$": "b" } }, vec![]),
        (doc! { "$currentDate": { "a": 1 } }, vec![]),
        (
            doc! { "$currentDate": { "a": { "$type": "time" } } },
            vec![],
        ),
        (
            doc! { "$currentDate": { "a": { "$type": "date", "x": 1 } } },
            vec![],
        ),
        (doc! { "$push": { "a": { "$each": 1 } } }, vec![]),
        (
            doc! { "$push": { "a": { "$each": [1], "$slice": 1.5 } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$slice": "1" } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$position": 0.5 } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$position": null } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$sort": 2 } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$sort": {} } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$sort": { "b": "asc" } } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$sort": { "$b": 1 } } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$sort": { "b..c": 1 } } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [1], "$foo": 1 } } },
            vec![],
        ),
        (doc! { "$push": { "a": { "$slice": 1 } } }, vec![]),
        (
            doc! { "$push": { "a": { "$sort": 1, "$position": 0 } } },
            vec![],
        ),
        (
            doc! { "$push": { "a": { "$each": [{ "$each": [1] }] } } },
            vec![],
        ),
        (doc! { "$push": { "a": { "b": 1, "$c": 1 } } }, vec![]),
        (
            doc! { "$addToSet": { "a": { "$each": [1], "$slice": 1 } } },
            vec![],
        ),
        (doc! { "$addToSet": { "a": { "$each": "x" } } }, vec![]),
        (doc! { "$pop": { "a": 2 } }, vec![]),
        (doc! { "$pop": { "a": "1" } }, vec![]),
        (doc! { "$pull": { "a": { "$gte": 1, "$foo": 1 } } }, vec![]),
        (doc! { "$pull": { "a": { "b": { "$bad": 1 } } } }, vec![]),
        (doc! { "$pullAll": { "a": 1 } }, vec![]),
        (doc! { "$set": { "a.$[i]": 1 } }, vec![]),
        (
            doc! { "$set": { "a.$[i]": 1 } },
            vec![doc! { "i": 1 }, doc! { "j": 2 }],
        ),
        (
            doc! { "$set": { "a.$[i]": 1 } },
            vec![doc! { "i": 1 }, doc! { "i": 2 }],
        ),
        (
            doc! { "$set": { "a.$[i]": 1 } },
            vec![doc! { "i": 1, "j": 2 }],
        ),
        (doc! { "$set": { "a.$[I]": 1 } }, vec![doc! { "I": 1 }]),
        (doc! { "$set": { "a.$[i]": 1 } }, vec![doc! {}]),
        (
            doc! { "$set": { "a.$[i]": 1 } },
            vec![doc! { "i": { "$bad": 1 } }],
        ),
        (doc! { "a": 1 }, vec![doc! { "i": 1 }]),
    ];
    let listing: Vec<String> = cases
        .iter()
        .map(|(update, filters)| {
            let filters_text = if filters.is_empty() {
                String::new()
            } else {
                let texts: Vec<String> = filters.iter().map(ToString::to_string).collect();
                format!(" arrayFilters [{}]", texts.join(", "))
            };
            format!(
                "{update}{filters_text}\n  => {}",
                parse_error(update, filters)
            )
        })
        .collect();
    insta::assert_snapshot!(listing.join("\n"));
}

#[test]
fn failed_applications() {
    let context = ApplyContext::new(DateTime::from_millis(0));
    let cases: Vec<(Document, Document)> = vec![
        (
            doc! { "_id": 7, "tags": "x" },
            doc! { "$push": { "tags": "y" } },
        ),
        (
            doc! { "_id": 7, "tags": 1 },
            doc! { "$addToSet": { "tags": "y" } },
        ),
        (
            doc! { "_id": 7, "tags": { "a": 1 } },
            doc! { "$pop": { "tags": 1 } },
        ),
        (
            doc! { "_id": 7, "tags": true },
            doc! { "$pull": { "tags": 1 } },
        ),
        (
            doc! { "_id": 7, "tags": null },
            doc! { "$pullAll": { "tags": [1] } },
        ),
        (doc! { "_id": 7, "n": "5" }, doc! { "$inc": { "n": 1 } }),
        (doc! { "_id": 7, "n": [5] }, doc! { "$mul": { "n": 2 } }),
        (
            doc! { "_id": 7, "n": i64::MIN },
            doc! { "$inc": { "n": -1 } },
        ),
        (doc! { "_id": "k", "a": 5 }, doc! { "$set": { "a.b": 1 } }),
        (doc! { "_id": "k", "a": [] }, doc! { "$set": { "a.b": 1 } }),
        (
            doc! { "_id": "k", "a": { "b": "s" } },
            doc! { "$set": { "a.b.c.d": 1 } },
        ),
        (doc! { "_id": "k" }, doc! { "$set": { "_id": "j" } }),
        (doc! { "_id": "k" }, doc! { "$unset": { "_id": 1 } }),
        (doc! { "_id": { "x": 1 } }, doc! { "$inc": { "_id.x": 1 } }),
        (
            doc! { "_id": 1, "a": [{ "b": 1 }] },
            doc! { "$rename": { "a.0.b": "c" } },
        ),
        (
            doc! { "_id": 1, "a": 1, "c": [1] },
            doc! { "$rename": { "a": "c.5" } },
        ),
        (doc! { "_id": 1, "a": [1] }, doc! { "$set": { "a.$": 1 } }),
        (doc! { "_id": 1 }, doc! { "$set": { "a.$[]": 1 } }),
        (
            doc! { "_id": 1, "a": "s" },
            doc! { "$set": { "a.$[].b": 1 } },
        ),
        (
            doc! { "_id": 1, "a": [{ "c": 1 }, { "c": 2 }] },
            doc! { "$set": { "a.$[].c.$[]": 1 } },
        ),
        (
            doc! { "_id": 1, "a": [1, [2]] },
            doc! { "$push": { "a.$[]": 3 } },
        ),
        (doc! { "_id": 1, "a": 1 }, doc! { "_id": 2 }),
        (doc! { "a": 1 }, doc! { "$push": { "a": 2 } }),
    ];
    let listing: Vec<String> = cases
        .into_iter()
        .map(|(document, update)| {
            let parsed = Update::parse(&update, &[]).expect("the update itself is valid");
            let mut updated = document.clone();
            let message = match parsed.apply(&mut updated, &context) {
                Ok(outcome) => panic!("{update} on {document} succeeded: {outcome:?} {updated}"),
                Err(error) => error.to_string(),
            };
            assert_eq!(updated, document, "a failed update changed the document");
            format!("{update} on {document}\n  => {message}")
        })
        .collect();
    insta::assert_snapshot!(listing.join("\n"));
}
