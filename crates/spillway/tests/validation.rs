//! Schema validation beyond `collection_options.rs`: validators on collections with a
//! pattern policy (checked on logical documents, across a reopen), the operators a validator
//! may not use, `validationAction: "warn"`'s log, and `errInfo` of query-operator
//! validators, through the facade and through `Commands::execute`.

use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;
use spillway::{CollectionOptions, Database, Pattern, ValidationAction, ValidationLevel};

/// A book whose `customers_purchased` holds `n` buyers.
fn book(id: i32, n: usize) -> Document {
    let buyers: Vec<Bson> = (0..n)
        .map(|i| Bson::String(format!("user{i:02}")))
        .collect();
    doc! { "_id": id, "title": "The Wooden Amulet", "customers_purchased": buyers }
}

/// A schema that only logical documents of `sales` can satisfy: no field beyond these (the
/// stored main document has the outlier's flag) and at most 8 buyers (the stored main
/// document has at most 3).
fn sales_schema() -> Document {
    doc! {
        "$jsonSchema": {
            "bsonType": "object",
            "additionalProperties": false,
            "required": ["title"],
            "properties": {
                "_id": {},
                "title": { "bsonType": "string" },
                "customers_purchased": { "bsonType": "array", "maxItems": 8 },
                "note": { "bsonType": "string" },
            },
        },
    }
}

fn sales_with_policy(db: &Database) {
    db.create_collection_with(
        "sales",
        &CollectionOptions::default().validator(sales_schema()),
    )
    .unwrap();
    db.set_pattern(Pattern::outlier("sales", "customers_purchased").threshold(3))
        .unwrap();
}

fn buyers(db: &Database, id: i32) -> usize {
    db.collection::<Document>("sales")
        .find_one(doc! { "_id": id })
        .run()
        .unwrap()
        .unwrap()
        .get_array("customers_purchased")
        .unwrap()
        .len()
}

#[test]
fn a_validator_on_a_collection_with_a_policy_sees_logical_documents() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        sales_with_policy(&db);
        let sales = db.collection::<Document>("sales");
        // Spilled: the stored main document has 3 buyers and `has_extras`, which the schema
        // refuses; the logical one is valid.
        sales.insert_one(book(1, 6)).run().unwrap();
        assert_eq!(buyers(&db, 1), 6);
        // Nine buyers logically, three in the main document: refused, nothing written.
        let refused = sales.insert_one(book(2, 9)).run().unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        assert_eq!(sales.count_documents(doc! {}).run().unwrap(), 1);
        sales
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "customers_purchased": { "$each": ["a", "b"] } } },
            )
            .run()
            .unwrap();
        assert_eq!(buyers(&db, 1), 8);
        let refused = sales
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "customers_purchased": "one too many" } },
            )
            .run()
            .unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        assert_eq!(buyers(&db, 1), 8, "the refused push left the buckets alone");
        let refused = sales
            .find_one_and_update(
                doc! { "_id": 1 },
                doc! { "$push": { "customers_purchased": "one too many" } },
            )
            .run()
            .unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        let refused = sales
            .replace_one(doc! { "_id": 1 }, book(1, 12))
            .run()
            .unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        // An upsert inserts a logical document, checked as one.
        let refused = sales
            .update_one(
                doc! { "_id": 3 },
                doc! { "$set": { "title": "x", "customers_purchased": book(3, 10).get_array("customers_purchased").unwrap().clone() } },
            )
            .upsert(true)
            .run()
            .unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        sales
            .update_one(
                doc! { "_id": 3 },
                doc! { "$set": { "title": "x", "customers_purchased": ["u1", "u2", "u3", "u4"] } },
            )
            .upsert(true)
            .run()
            .unwrap();
        assert_eq!(buyers(&db, 3), 4);
        // A field the schema forbids is refused as on a plain collection.
        let refused = sales
            .update_one(doc! { "_id": 3 }, doc! { "$set": { "extra": 1 } })
            .run()
            .unwrap_err();
        assert_eq!(refused.code(), Some(121), "{refused}");
        // Bypassed, the write goes through.
        sales
            .update_one(
                doc! { "_id": 3 },
                doc! { "$push": { "customers_purchased": { "$each": ["a", "b", "c", "d", "e"] } } },
            )
            .bypass_document_validation(true)
            .run()
            .unwrap();
        assert_eq!(buyers(&db, 3), 9);
    }
    // After a reopen the validator is still there and still logical.
    let db = Database::open(dir.path()).unwrap();
    let sales = db.collection::<Document>("sales");
    let refused = sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": "one too many" } },
        )
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$pop": { "customers_purchased": 1 } },
        )
        .run()
        .unwrap();
    assert_eq!(buyers(&db, 1), 7);
    // Moderate: document 3 (9 buyers, invalid since its bypassed push) may still change;
    // valid document 1 may not become invalid.
    db.set_collection_options(
        "sales",
        &CollectionOptions::default().validation_level(ValidationLevel::Moderate),
    )
    .unwrap();
    sales
        .update_one(
            doc! { "_id": 3 },
            doc! { "$set": { "note": "still too many" } },
        )
        .run()
        .unwrap();
    let refused = sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": { "$each": ["a", "b"] } } },
        )
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
    // Warn: the write goes through, and is logged.
    db.set_collection_options(
        "sales",
        &CollectionOptions::default().validation_action(ValidationAction::Warn),
    )
    .unwrap();
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": { "$each": ["a", "b"] } } },
        )
        .run()
        .unwrap();
    assert_eq!(buyers(&db, 1), 9);
    let warnings = db.validation_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].document_id, Bson::Int32(1));
    assert_eq!(warnings[0].collection, "sales");
}

#[test]
fn a_validator_on_a_subset_collection_sees_every_element() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection_with(
        "products",
        &CollectionOptions::default().validator(doc! {
            "$jsonSchema": { "properties": { "reviews": { "maxItems": 4 } } },
        }),
    )
    .unwrap();
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(2)
            .sort_by(doc! { "date": -1 }),
    )
    .unwrap();
    let products = db.collection::<Document>("products");
    let reviews: Vec<Bson> = (0..4)
        .map(|date| Bson::Document(doc! { "date": date, "text": "fine" }))
        .collect();
    products
        .insert_one(doc! { "_id": 1, "reviews": reviews })
        .run()
        .unwrap();
    // The main document embeds 2 reviews; the logical document has 4, and a fifth is one
    // too many.
    let refused = products
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "reviews": { "date": 9, "text": "late" } } },
        )
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
    let document = products.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(document.get_array("reviews").unwrap().len(), 4);
}

#[test]
fn validators_refuse_where_text_and_near_and_accept_expr() {
    let db = Database::open_in_memory().unwrap();
    for validator in [
        doc! { "$where": "this.a > 1" },
        doc! { "$text": { "$search": "bob" } },
        doc! { "loc": { "$near": [0, 0] } },
        doc! { "$or": [{ "a": 1 }, { "loc": { "$nearSphere": [0, 0] } }] },
        doc! { "$and": [{ "$where": "true" }] },
    ] {
        let refused = db
            .create_collection_with(
                "refused",
                &CollectionOptions::default().validator(validator.clone()),
            )
            .unwrap_err();
        assert_eq!(refused.code(), Some(2), "{validator}: {refused}");
        assert!(
            refused
                .to_string()
                .contains("is not allowed in this context"),
            "{refused}"
        );
        assert!(
            !db.list_collection_names()
                .run()
                .unwrap()
                .contains(&"refused".to_string()),
            "a refused create stores nothing"
        );
    }
    // A damaged `$jsonSchema` is refused with its own code, and nothing is created.
    let refused = db
        .create_collection_with(
            "refused",
            &CollectionOptions::default().validator(doc! { "$jsonSchema": { "minimum": "x" } }),
        )
        .unwrap_err();
    assert!(
        matches!(refused.code(), Some(9 | 14 | 2)),
        "{:?} {refused}",
        refused.code()
    );
    assert!(refused.to_string().contains("minimum"), "{refused}");
    assert!(db.list_collection_names().run().unwrap().is_empty());
    // collMod refuses them too, and keeps the validator it had.
    db.create_collection_with(
        "prices",
        &CollectionOptions::default().validator(doc! { "$expr": { "$lte": ["$low", "$high"] } }),
    )
    .unwrap();
    let refused = db
        .set_collection_options(
            "prices",
            &CollectionOptions::default().validator(doc! { "$where": "true" }),
        )
        .unwrap_err();
    assert_eq!(refused.code(), Some(2), "{refused}");
    let prices = db.collection::<Document>("prices");
    prices
        .insert_one(doc! { "low": 1, "high": 2 })
        .run()
        .unwrap();
    let refused = prices
        .insert_one(doc! { "low": 3, "high": 2 })
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
}

#[test]
fn warn_lets_writes_through_and_logs_them() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection_with(
        "orders",
        &CollectionOptions::default()
            .validator(doc! { "qty": { "$gte": 0 } })
            .validation_action(ValidationAction::Warn),
    )
    .unwrap();
    let orders = db.collection::<Document>("orders");
    orders
        .insert_one(doc! { "_id": 1, "qty": 1 })
        .run()
        .unwrap();
    assert!(db.validation_warnings().is_empty());
    orders
        .insert_one(doc! { "_id": 2, "qty": -1 })
        .run()
        .unwrap();
    orders
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "qty": -2 } })
        .run()
        .unwrap();
    let warnings = db.validation_warnings();
    let ids: Vec<&Bson> = warnings
        .iter()
        .map(|warning| &warning.document_id)
        .collect();
    assert_eq!(ids, [&Bson::Int32(2), &Bson::Int32(1)]);
    assert_eq!(
        warnings[0]
            .details
            .as_ref()
            .unwrap()
            .get_str("operatorName")
            .ok(),
        Some("$gte")
    );
    // A bypassed write is not checked, so not logged.
    orders
        .insert_one(doc! { "_id": 3, "qty": -3 })
        .bypass_document_validation(true)
        .run()
        .unwrap();
    assert_eq!(db.validation_warnings().len(), 2);
    assert_eq!(orders.count_documents(doc! {}).run().unwrap(), 3);
}

fn run(commands: &Commands, mut command: Document) -> Document {
    command.insert("$db", "shop");
    commands.execute(command)
}

#[test]
fn errinfo_explains_query_operator_clauses_as_mongodb_does() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    let created = run(
        &commands,
        doc! {
            "create": "items",
            "validator": {
                "$and": [{ "name": { "$type": "string" } }, { "qty": { "$exists": true } }],
                "price": { "$gte": 0 },
            },
        },
    );
    assert_eq!(created.get_f64("ok").ok(), Some(1.0), "{created}");
    let listed = run(&commands, doc! { "listCollections": 1 });
    let options = listed
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("options")
        .unwrap()
        .clone();
    assert_eq!(
        options.get_str("validationLevel").ok(),
        Some("strict"),
        "{options}"
    );
    assert_eq!(
        options.get_str("validationAction").ok(),
        Some("error"),
        "{options}"
    );
    assert!(options.get_document("validator").is_ok(), "{options}");
    let reply = run(
        &commands,
        doc! { "insert": "items", "documents": [{ "_id": 7, "name": 5, "qty": 1, "price": -1 }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(121), "{error}");
    let info = error.get_document("errInfo").unwrap();
    assert_eq!(info.get("failingDocumentId"), Some(&Bson::Int32(7)));
    let expected = doc! {
        "operatorName": "$and",
        "clausesNotSatisfied": [
            {
                "index": 0_i64,
                "details": {
                    "operatorName": "$and",
                    "clausesNotSatisfied": [{
                        "index": 0_i64,
                        "details": {
                            "operatorName": "$type",
                            "specifiedAs": { "name": { "$type": "string" } },
                            "reason": "type did not match",
                            "consideredValue": 5,
                            "consideredType": "int",
                        },
                    }],
                },
            },
            {
                "index": 1_i64,
                "details": {
                    "operatorName": "$gte",
                    "specifiedAs": { "price": { "$gte": 0 } },
                    "reason": "comparison failed",
                    "consideredValue": -1,
                },
            },
        ],
    };
    assert_eq!(info.get_document("details").ok(), Some(&expected), "{info}");
    // A missing field says so.
    let reply = run(
        &commands,
        doc! { "insert": "items", "documents": [{ "_id": 8, "name": "n", "qty": 1 }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    let details = error
        .get_document("errInfo")
        .unwrap()
        .get_document("details")
        .unwrap();
    let clause = details.get_array("clausesNotSatisfied").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("details")
        .unwrap();
    assert_eq!(
        clause.get_str("reason").ok(),
        Some("field was missing"),
        "{details}"
    );
    // bypassDocumentValidation on the command lets it through.
    let reply = run(
        &commands,
        doc! {
            "insert": "items",
            "documents": [{ "_id": 9, "price": -5 }],
            "bypassDocumentValidation": true,
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    // collMod changes level and action; listCollections shows them.
    run(
        &commands,
        doc! { "collMod": "items", "validationLevel": "moderate", "validationAction": "warn" },
    );
    let listed = run(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "items" } },
    );
    let options = listed
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("options")
        .unwrap()
        .clone();
    assert_eq!(options.get_str("validationLevel").ok(), Some("moderate"));
    assert_eq!(options.get_str("validationAction").ok(), Some("warn"));
    // A refused operator through the command: BadValue.
    let reply = run(
        &commands,
        doc! { "create": "w", "validator": { "$where": "true" } },
    );
    assert_eq!(reply.get_i32("code").ok(), Some(2), "{reply}");
}

/// The first write error's code of a reply, or the command's code when it failed.
fn refusal_code(reply: &Document) -> Option<i32> {
    reply
        .get_array("writeErrors")
        .ok()
        .and_then(|errors| errors.first())
        .and_then(|error| error.as_document())
        .and_then(|error| error.get_i32("code").ok())
        .or_else(|| reply.get_i32("code").ok())
}

#[test]
fn every_write_command_checks_the_validator_unless_bypassed() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    run(
        &commands,
        doc! { "create": "stock", "validator": { "qty": { "$gte": 0 } } },
    );
    run(
        &commands,
        doc! { "insert": "source", "documents": [{ "_id": 1, "qty": -1 }] },
    );
    let cases = [
        doc! { "update": "stock", "updates": [{ "q": { "_id": 5 }, "u": { "$set": { "qty": -1 } }, "upsert": true }] },
        doc! { "update": "stock", "updates": [{ "q": { "_id": 5 }, "u": { "qty": -1 }, "upsert": true }] },
        doc! { "findAndModify": "stock", "query": { "_id": 5 }, "update": { "$set": { "qty": -1 } }, "upsert": true },
        doc! { "aggregate": "source", "pipeline": [{ "$merge": { "into": "stock" } }], "cursor": {} },
        doc! { "aggregate": "source", "pipeline": [{ "$out": "stock" }], "cursor": {} },
    ];
    for command in &cases {
        let reply = run(&commands, command.clone());
        assert_eq!(refusal_code(&reply), Some(121), "{command}: {reply}");
    }
    let bulk = commands.execute(doc! {
        "bulkWrite": 1,
        "ops": [{ "insert": 0, "document": { "_id": 9, "qty": -9 } }],
        "nsInfo": [{ "ns": "shop.stock" }],
        "$db": "admin",
    });
    let failed = bulk
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .map(|batch| batch[0].as_document().unwrap().get_i32("code").ok())
        .unwrap_or_default();
    assert_eq!(failed, Some(121), "{bulk}");
    let count = run(&commands, doc! { "count": "stock" });
    assert_eq!(count.get_i32("n").ok(), Some(0), "{count}");
    for command in &cases {
        let mut command = command.clone();
        command.insert("bypassDocumentValidation", true);
        let reply = run(&commands, command.clone());
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{command}: {reply}");
        assert_eq!(refusal_code(&reply), None, "{command}: {reply}");
    }
    let count = run(&commands, doc! { "count": "stock" });
    assert!(count.get_i32("n").unwrap() >= 1, "{count}");
}
