// The Outlier pattern seed (MongoDB manual, "Group Data with the Outlier Pattern"), run by
// Spillway: `spillway run <db> examples/outlier.js`.
//
// The seed's statements are below verbatim, except for its placeholders, written out in full:
//   - `[ "user00", "user01", "user02", ... "user49" ]` is the 50 names user00..user49;
//   - `[ "user50", "user51", "user52", ... "user999" ]` is the 950 names user50..user999.
// The seed's text needs no other fix to parse.
//
// The seed lays the outlier out by hand: the first 50 buyers in `sales`, `has_extras: true`,
// and the rest in an `extra_sales` document linked by `book_id`. `setPattern` below declares
// that layout as a policy: Spillway adopts the documents already there and from then on keeps
// the layout itself through every write (the application logic the seed describes under
// "Updates for Outliers").

db.sales.insertOne(
{
"_id": 1,
"title": "Invisible Cities",
"year": 1972,
"author": "Italo Calvino",
"customers_purchased": [ "user00", "user01", "user02" ]
}
)

db.sales.insertOne(
{
"_id": 2,
"title": "The Wooden Amulet",
"year": 2023,
"author": "Lesley Moreno",
"customers_purchased": [ "user00", "user01", "user02", "user03", "user04", "user05", "user06", "user07", "user08", "user09",
    "user10", "user11", "user12", "user13", "user14", "user15", "user16", "user17", "user18", "user19",
    "user20", "user21", "user22", "user23", "user24", "user25", "user26", "user27", "user28", "user29",
    "user30", "user31", "user32", "user33", "user34", "user35", "user36", "user37", "user38", "user39",
    "user40", "user41", "user42", "user43", "user44", "user45", "user46", "user47", "user48", "user49" ],
"has_extras": true
}
)

db.extra_sales.insertOne(
{
"book_id": 2,
"customers_purchased_extra": [ "user50", "user51", "user52", "user53", "user54", "user55", "user56", "user57", "user58", "user59",
    "user60", "user61", "user62", "user63", "user64", "user65", "user66", "user67", "user68", "user69",
    "user70", "user71", "user72", "user73", "user74", "user75", "user76", "user77", "user78", "user79",
    "user80", "user81", "user82", "user83", "user84", "user85", "user86", "user87", "user88", "user89",
    "user90", "user91", "user92", "user93", "user94", "user95", "user96", "user97", "user98", "user99",
    "user100", "user101", "user102", "user103", "user104", "user105", "user106", "user107", "user108", "user109",
    "user110", "user111", "user112", "user113", "user114", "user115", "user116", "user117", "user118", "user119",
    "user120", "user121", "user122", "user123", "user124", "user125", "user126", "user127", "user128", "user129",
    "user130", "user131", "user132", "user133", "user134", "user135", "user136", "user137", "user138", "user139",
    "user140", "user141", "user142", "user143", "user144", "user145", "user146", "user147", "user148", "user149",
    "user150", "user151", "user152", "user153", "user154", "user155", "user156", "user157", "user158", "user159",
    "user160", "user161", "user162", "user163", "user164", "user165", "user166", "user167", "user168", "user169",
    "user170", "user171", "user172", "user173", "user174", "user175", "user176", "user177", "user178", "user179",
    "user180", "user181", "user182", "user183", "user184", "user185", "user186", "user187", "user188", "user189",
    "user190", "user191", "user192", "user193", "user194", "user195", "user196", "user197", "user198", "user199",
    "user200", "user201", "user202", "user203", "user204", "user205", "user206", "user207", "user208", "user209",
    "user210", "user211", "user212", "user213", "user214", "user215", "user216", "user217", "user218", "user219",
    "user220", "user221", "user222", "user223", "user224", "user225", "user226", "user227", "user228", "user229",
    "user230", "user231", "user232", "user233", "user234", "user235", "user236", "user237", "user238", "user239",
    "user240", "user241", "user242", "user243", "user244", "user245", "user246", "user247", "user248", "user249",
    "user250", "user251", "user252", "user253", "user254", "user255", "user256", "user257", "user258", "user259",
    "user260", "user261", "user262", "user263", "user264", "user265", "user266", "user267", "user268", "user269",
    "user270", "user271", "user272", "user273", "user274", "user275", "user276", "user277", "user278", "user279",
    "user280", "user281", "user282", "user283", "user284", "user285", "user286", "user287", "user288", "user289",
    "user290", "user291", "user292", "user293", "user294", "user295", "user296", "user297", "user298", "user299",
    "user300", "user301", "user302", "user303", "user304", "user305", "user306", "user307", "user308", "user309",
    "user310", "user311", "user312", "user313", "user314", "user315", "user316", "user317", "user318", "user319",
    "user320", "user321", "user322", "user323", "user324", "user325", "user326", "user327", "user328", "user329",
    "user330", "user331", "user332", "user333", "user334", "user335", "user336", "user337", "user338", "user339",
    "user340", "user341", "user342", "user343", "user344", "user345", "user346", "user347", "user348", "user349",
    "user350", "user351", "user352", "user353", "user354", "user355", "user356", "user357", "user358", "user359",
    "user360", "user361", "user362", "user363", "user364", "user365", "user366", "user367", "user368", "user369",
    "user370", "user371", "user372", "user373", "user374", "user375", "user376", "user377", "user378", "user379",
    "user380", "user381", "user382", "user383", "user384", "user385", "user386", "user387", "user388", "user389",
    "user390", "user391", "user392", "user393", "user394", "user395", "user396", "user397", "user398", "user399",
    "user400", "user401", "user402", "user403", "user404", "user405", "user406", "user407", "user408", "user409",
    "user410", "user411", "user412", "user413", "user414", "user415", "user416", "user417", "user418", "user419",
    "user420", "user421", "user422", "user423", "user424", "user425", "user426", "user427", "user428", "user429",
    "user430", "user431", "user432", "user433", "user434", "user435", "user436", "user437", "user438", "user439",
    "user440", "user441", "user442", "user443", "user444", "user445", "user446", "user447", "user448", "user449",
    "user450", "user451", "user452", "user453", "user454", "user455", "user456", "user457", "user458", "user459",
    "user460", "user461", "user462", "user463", "user464", "user465", "user466", "user467", "user468", "user469",
    "user470", "user471", "user472", "user473", "user474", "user475", "user476", "user477", "user478", "user479",
    "user480", "user481", "user482", "user483", "user484", "user485", "user486", "user487", "user488", "user489",
    "user490", "user491", "user492", "user493", "user494", "user495", "user496", "user497", "user498", "user499",
    "user500", "user501", "user502", "user503", "user504", "user505", "user506", "user507", "user508", "user509",
    "user510", "user511", "user512", "user513", "user514", "user515", "user516", "user517", "user518", "user519",
    "user520", "user521", "user522", "user523", "user524", "user525", "user526", "user527", "user528", "user529",
    "user530", "user531", "user532", "user533", "user534", "user535", "user536", "user537", "user538", "user539",
    "user540", "user541", "user542", "user543", "user544", "user545", "user546", "user547", "user548", "user549",
    "user550", "user551", "user552", "user553", "user554", "user555", "user556", "user557", "user558", "user559",
    "user560", "user561", "user562", "user563", "user564", "user565", "user566", "user567", "user568", "user569",
    "user570", "user571", "user572", "user573", "user574", "user575", "user576", "user577", "user578", "user579",
    "user580", "user581", "user582", "user583", "user584", "user585", "user586", "user587", "user588", "user589",
    "user590", "user591", "user592", "user593", "user594", "user595", "user596", "user597", "user598", "user599",
    "user600", "user601", "user602", "user603", "user604", "user605", "user606", "user607", "user608", "user609",
    "user610", "user611", "user612", "user613", "user614", "user615", "user616", "user617", "user618", "user619",
    "user620", "user621", "user622", "user623", "user624", "user625", "user626", "user627", "user628", "user629",
    "user630", "user631", "user632", "user633", "user634", "user635", "user636", "user637", "user638", "user639",
    "user640", "user641", "user642", "user643", "user644", "user645", "user646", "user647", "user648", "user649",
    "user650", "user651", "user652", "user653", "user654", "user655", "user656", "user657", "user658", "user659",
    "user660", "user661", "user662", "user663", "user664", "user665", "user666", "user667", "user668", "user669",
    "user670", "user671", "user672", "user673", "user674", "user675", "user676", "user677", "user678", "user679",
    "user680", "user681", "user682", "user683", "user684", "user685", "user686", "user687", "user688", "user689",
    "user690", "user691", "user692", "user693", "user694", "user695", "user696", "user697", "user698", "user699",
    "user700", "user701", "user702", "user703", "user704", "user705", "user706", "user707", "user708", "user709",
    "user710", "user711", "user712", "user713", "user714", "user715", "user716", "user717", "user718", "user719",
    "user720", "user721", "user722", "user723", "user724", "user725", "user726", "user727", "user728", "user729",
    "user730", "user731", "user732", "user733", "user734", "user735", "user736", "user737", "user738", "user739",
    "user740", "user741", "user742", "user743", "user744", "user745", "user746", "user747", "user748", "user749",
    "user750", "user751", "user752", "user753", "user754", "user755", "user756", "user757", "user758", "user759",
    "user760", "user761", "user762", "user763", "user764", "user765", "user766", "user767", "user768", "user769",
    "user770", "user771", "user772", "user773", "user774", "user775", "user776", "user777", "user778", "user779",
    "user780", "user781", "user782", "user783", "user784", "user785", "user786", "user787", "user788", "user789",
    "user790", "user791", "user792", "user793", "user794", "user795", "user796", "user797", "user798", "user799",
    "user800", "user801", "user802", "user803", "user804", "user805", "user806", "user807", "user808", "user809",
    "user810", "user811", "user812", "user813", "user814", "user815", "user816", "user817", "user818", "user819",
    "user820", "user821", "user822", "user823", "user824", "user825", "user826", "user827", "user828", "user829",
    "user830", "user831", "user832", "user833", "user834", "user835", "user836", "user837", "user838", "user839",
    "user840", "user841", "user842", "user843", "user844", "user845", "user846", "user847", "user848", "user849",
    "user850", "user851", "user852", "user853", "user854", "user855", "user856", "user857", "user858", "user859",
    "user860", "user861", "user862", "user863", "user864", "user865", "user866", "user867", "user868", "user869",
    "user870", "user871", "user872", "user873", "user874", "user875", "user876", "user877", "user878", "user879",
    "user880", "user881", "user882", "user883", "user884", "user885", "user886", "user887", "user888", "user889",
    "user890", "user891", "user892", "user893", "user894", "user895", "user896", "user897", "user898", "user899",
    "user900", "user901", "user902", "user903", "user904", "user905", "user906", "user907", "user908", "user909",
    "user910", "user911", "user912", "user913", "user914", "user915", "user916", "user917", "user918", "user919",
    "user920", "user921", "user922", "user923", "user924", "user925", "user926", "user927", "user928", "user929",
    "user930", "user931", "user932", "user933", "user934", "user935", "user936", "user937", "user938", "user939",
    "user940", "user941", "user942", "user943", "user944", "user945", "user946", "user947", "user948", "user949",
    "user950", "user951", "user952", "user953", "user954", "user955", "user956", "user957", "user958", "user959",
    "user960", "user961", "user962", "user963", "user964", "user965", "user966", "user967", "user968", "user969",
    "user970", "user971", "user972", "user973", "user974", "user975", "user976", "user977", "user978", "user979",
    "user980", "user981", "user982", "user983", "user984", "user985", "user986", "user987", "user988", "user989",
    "user990", "user991", "user992", "user993", "user994", "user995", "user996", "user997", "user998", "user999" ]
}
)

// The seed's layout as a policy. `unboundedBuckets: true` keeps one extra_sales document per
// book, as the seed has it (the default, `bucketCapacity: 100`, splits the overflow into
// documents of 100 buyers so that none grows without bound).
db.sales.setPattern({ outlier: "customers_purchased", threshold: 50, overflowCollection: "extra_sales", linkField: "book_id", flagField: "has_extras", overflowField: "customers_purchased_extra", unboundedBuckets: true })
show patterns
db.verifyPatterns()

// Reads answer as a plain collection would: the logical array is whole. The hot path (the
// first buyers) reads the main document only; the stored layout is its own namespace.
db.sales.findOne({ _id: 1 })
db.sales.findOne({ _id: 2 }, { title: 1, customers_purchased: { $slice: 3 } })
db['system.stored.sales'].findOne({ _id: 2 }, { title: 1, has_extras: 1 })
db.sales.arrayLength(2, "customers_purchased")
db.sales.arrayPage(2, "customers_purchased", { skip: 48, limit: 4 })
db.sales.find({ customers_purchased: "user777" }, { title: 1 })
db.extra_sales.find({}, { _id: 0, book_id: 1 })

// Writes keep the layout: book 1 crosses the threshold, book 2 gets one more buyer.
db.sales.updateOne({ _id: 1 }, { $push: { customers_purchased: { $each: [ "user03", "user04", "user05", "user06", "user07", "user08", "user09", "user10", "user11", "user12",
    "user13", "user14", "user15", "user16", "user17", "user18", "user19", "user20", "user21", "user22",
    "user23", "user24", "user25", "user26", "user27", "user28", "user29", "user30", "user31", "user32",
    "user33", "user34", "user35", "user36", "user37", "user38", "user39", "user40", "user41", "user42",
    "user43", "user44", "user45", "user46", "user47", "user48", "user49", "user50", "user51", "user52" ] } } })
db['system.stored.sales'].findOne({ _id: 1 }, { has_extras: 1 })
db.sales.arrayLength(1, "customers_purchased")
db.sales.arrayPage(1, "customers_purchased", { skip: 50 })
db.sales.updateOne({ _id: 2 }, { $push: { customers_purchased: "user1000" } })
db.sales.arrayLength(2, "customers_purchased")
db.sales.arrayPage(2, "customers_purchased", { skip: 999 })
db.extra_sales.countDocuments()
db.verifyPatterns()
