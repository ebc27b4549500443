// The Subset pattern seed (MongoDB manual, "Group Data with the Subset Pattern"), run by
// Spillway: `spillway run <db> examples/subset.js`.
//
// The seed's three statements are below verbatim, except for:
//   - its `[...]` placeholders, written out in full: the first statement's reviews are
//     review_id 786 down to 1 (786 reviews), the second's 786 down to 776, the third's 786
//     down to 1. Reviews 786, 785, 776 and 1 are the seed's own; the others are generated
//     (authors and texts from short lists, dates falling from 2019-02-16 to 2017-12-07, so
//     that review_id order is date order; 777..784 share 2019-02-16 and get distinct hours,
//     so that the 10 newest never depend on a tie);
//   - fix 1: a comma after `description: "This is the most useful item in your toolbox."`
//     (missing in the seed, in both product statements);
//   - fix 2: the seed's ObjectId("507f1f77bcf86cd99338452") has 23 hexadecimal digits, one
//     short of an ObjectId: it is written ObjectId("507f1f77bcf86cd993384520") (a 0 appended).
// The seed's typo "widgt" in the first statement is kept.
//
// The seed shows two states of the same product (`_id` 507f1f77bcf86cd993384520): first
// every review embedded, then the hand-made split into `products` (the newest reviews) and
// `review` (every review). The script runs both: part 1 lets Spillway apply the Subset pattern to the first
// state; part 2 starts again from the seed's hand-made split, which `setPattern` adopts.
//
// The seed writes the archive as `db.collection('review')` (singular) while its text calls
// it "the reviews collection": the statement is kept as written, so the policy's archive
// collection is `review`. The seed's second statement keeps 11 reviews (786 down to 776)
// while its text says "the ten most recent": the policy keeps 10, so 776 stays in the
// archive only.

// Part 1. The seed's first state: every review embedded in the product.
db.collection('products').insertOne( [
{
_id: ObjectId("507f1f77bcf86cd993384520"),
name: "Super Widget",
description: "This is the most useful item in your toolbox.",
price: { value: Decimal128("119.99"), currency: "USD" },
reviews: [
{
review_id: 786,
review_author: "Kristina",
review_text: "This is indeed an amazing widgt.",
published_date: ISODate("2019-02-18")
},
{
review_id: 785,
review_author: "Trina",
review_text: "Very nice product, slow shipping.",
published_date: ISODate("2019-02-17")
},
{
review_id: 784,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-02-16T17:00:00Z")
},
{
review_id: 783,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-02-16T16:00:00Z")
},
{
review_id: 782,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-02-16T15:00:00Z")
},
{
review_id: 781,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-02-16T14:00:00Z")
},
{
review_id: 780,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-02-16T13:00:00Z")
},
{
review_id: 779,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-02-16T12:00:00Z")
},
{
review_id: 778,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-02-16T11:00:00Z")
},
{
review_id: 777,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-02-16T10:00:00Z")
},
{
review_id: 776,
review_author: "Pablo",
review_text: "Amazing!",
published_date: ISODate("2019-02-15")
},
{
review_id: 775,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-02-14")
},
{
review_id: 774,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2019-02-13")
},
{
review_id: 773,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2019-02-12")
},
{
review_id: 772,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2019-02-12")
},
{
review_id: 771,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-02-11")
},
{
review_id: 770,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2019-02-11")
},
{
review_id: 769,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2019-02-10")
},
{
review_id: 768,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-02-10")
},
{
review_id: 767,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2019-02-09")
},
{
review_id: 766,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2019-02-08")
},
{
review_id: 765,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-02-08")
},
{
review_id: 764,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-02-07")
},
{
review_id: 763,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-02-07")
},
{
review_id: 762,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-02-06")
},
{
review_id: 761,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-02-06")
},
{
review_id: 760,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-02-05")
},
{
review_id: 759,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-02-05")
},
{
review_id: 758,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-02-04")
},
{
review_id: 757,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-02-03")
},
{
review_id: 756,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2019-02-03")
},
{
review_id: 755,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-02-02")
},
{
review_id: 754,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2019-02-02")
},
{
review_id: 753,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2019-02-01")
},
{
review_id: 752,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2019-02-01")
},
{
review_id: 751,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-31")
},
{
review_id: 750,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2019-01-30")
},
{
review_id: 749,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2019-01-30")
},
{
review_id: 748,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-29")
},
{
review_id: 747,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2019-01-29")
},
{
review_id: 746,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2019-01-28")
},
{
review_id: 745,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-01-28")
},
{
review_id: 744,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-01-27")
},
{
review_id: 743,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-01-27")
},
{
review_id: 742,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-01-26")
},
{
review_id: 741,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-25")
},
{
review_id: 740,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-01-25")
},
{
review_id: 739,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-01-24")
},
{
review_id: 738,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-24")
},
{
review_id: 737,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-01-23")
},
{
review_id: 736,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2019-01-23")
},
{
review_id: 735,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-01-22")
},
{
review_id: 734,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2019-01-21")
},
{
review_id: 733,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2019-01-21")
},
{
review_id: 732,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2019-01-20")
},
{
review_id: 731,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-20")
},
{
review_id: 730,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2019-01-19")
},
{
review_id: 729,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2019-01-19")
},
{
review_id: 728,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-18")
},
{
review_id: 727,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2019-01-18")
},
{
review_id: 726,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2019-01-17")
},
{
review_id: 725,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-01-16")
},
{
review_id: 724,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-01-16")
},
{
review_id: 723,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-01-15")
},
{
review_id: 722,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-01-15")
},
{
review_id: 721,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-14")
},
{
review_id: 720,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-01-14")
},
{
review_id: 719,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-01-13")
},
{
review_id: 718,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-12")
},
{
review_id: 717,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-01-12")
},
{
review_id: 716,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2019-01-11")
},
{
review_id: 715,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-01-11")
},
{
review_id: 714,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2019-01-10")
},
{
review_id: 713,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2019-01-10")
},
{
review_id: 712,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2019-01-09")
},
{
review_id: 711,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-09")
},
{
review_id: 710,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2019-01-08")
},
{
review_id: 709,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2019-01-07")
},
{
review_id: 708,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-07")
},
{
review_id: 707,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2019-01-06")
},
{
review_id: 706,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2019-01-06")
},
{
review_id: 705,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2019-01-05")
},
{
review_id: 704,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-01-05")
},
{
review_id: 703,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-01-04")
},
{
review_id: 702,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-01-04")
},
{
review_id: 701,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-01-03")
},
{
review_id: 700,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-01-02")
},
{
review_id: 699,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-01-02")
},
{
review_id: 698,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-01-01")
},
{
review_id: 697,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-01-01")
},
{
review_id: 696,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-12-31")
},
{
review_id: 695,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-31")
},
{
review_id: 694,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-12-30")
},
{
review_id: 693,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-12-29")
},
{
review_id: 692,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-29")
},
{
review_id: 691,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-12-28")
},
{
review_id: 690,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-12-28")
},
{
review_id: 689,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-12-27")
},
{
review_id: 688,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-12-27")
},
{
review_id: 687,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-12-26")
},
{
review_id: 686,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-12-26")
},
{
review_id: 685,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-25")
},
{
review_id: 684,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-12-24")
},
{
review_id: 683,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-12-24")
},
{
review_id: 682,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-23")
},
{
review_id: 681,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-12-23")
},
{
review_id: 680,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-12-22")
},
{
review_id: 679,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-12-22")
},
{
review_id: 678,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-12-21")
},
{
review_id: 677,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-12-20")
},
{
review_id: 676,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-12-20")
},
{
review_id: 675,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-19")
},
{
review_id: 674,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-12-19")
},
{
review_id: 673,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-12-18")
},
{
review_id: 672,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-18")
},
{
review_id: 671,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-12-17")
},
{
review_id: 670,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-12-17")
},
{
review_id: 669,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-12-16")
},
{
review_id: 668,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-12-15")
},
{
review_id: 667,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-12-15")
},
{
review_id: 666,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-12-14")
},
{
review_id: 665,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-14")
},
{
review_id: 664,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-12-13")
},
{
review_id: 663,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-12-13")
},
{
review_id: 662,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-12")
},
{
review_id: 661,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-12-11")
},
{
review_id: 660,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-12-11")
},
{
review_id: 659,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-12-10")
},
{
review_id: 658,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-12-10")
},
{
review_id: 657,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-12-09")
},
{
review_id: 656,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-12-09")
},
{
review_id: 655,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-08")
},
{
review_id: 654,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-12-08")
},
{
review_id: 653,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-12-07")
},
{
review_id: 652,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-06")
},
{
review_id: 651,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-12-06")
},
{
review_id: 650,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-12-05")
},
{
review_id: 649,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-12-05")
},
{
review_id: 648,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-12-04")
},
{
review_id: 647,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-12-04")
},
{
review_id: 646,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-12-03")
},
{
review_id: 645,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-12-03")
},
{
review_id: 644,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-12-02")
},
{
review_id: 643,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-12-01")
},
{
review_id: 642,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-12-01")
},
{
review_id: 641,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-30")
},
{
review_id: 640,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-11-30")
},
{
review_id: 639,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-11-29")
},
{
review_id: 638,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-29")
},
{
review_id: 637,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-11-28")
},
{
review_id: 636,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-11-27")
},
{
review_id: 635,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-11-27")
},
{
review_id: 634,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-11-26")
},
{
review_id: 633,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-11-26")
},
{
review_id: 632,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-11-25")
},
{
review_id: 631,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-25")
},
{
review_id: 630,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-11-24")
},
{
review_id: 629,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-11-24")
},
{
review_id: 628,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-23")
},
{
review_id: 627,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-11-22")
},
{
review_id: 626,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-11-22")
},
{
review_id: 625,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-11-21")
},
{
review_id: 624,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-11-21")
},
{
review_id: 623,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-11-20")
},
{
review_id: 622,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-11-20")
},
{
review_id: 621,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-19")
},
{
review_id: 620,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-11-18")
},
{
review_id: 619,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-11-18")
},
{
review_id: 618,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-17")
},
{
review_id: 617,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-11-17")
},
{
review_id: 616,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-11-16")
},
{
review_id: 615,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-11-16")
},
{
review_id: 614,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-11-15")
},
{
review_id: 613,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-11-15")
},
{
review_id: 612,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-11-14")
},
{
review_id: 611,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-13")
},
{
review_id: 610,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-11-13")
},
{
review_id: 609,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-11-12")
},
{
review_id: 608,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-12")
},
{
review_id: 607,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-11-11")
},
{
review_id: 606,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-11-11")
},
{
review_id: 605,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-11-10")
},
{
review_id: 604,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-11-09")
},
{
review_id: 603,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-11-09")
},
{
review_id: 602,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-11-08")
},
{
review_id: 601,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-08")
},
{
review_id: 600,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-11-07")
},
{
review_id: 599,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-11-07")
},
{
review_id: 598,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-06")
},
{
review_id: 597,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-11-06")
},
{
review_id: 596,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-11-05")
},
{
review_id: 595,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-11-04")
},
{
review_id: 594,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-11-04")
},
{
review_id: 593,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-11-03")
},
{
review_id: 592,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-11-03")
},
{
review_id: 591,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-11-02")
},
{
review_id: 590,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-11-02")
},
{
review_id: 589,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-11-01")
},
{
review_id: 588,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-11-01")
},
{
review_id: 587,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-10-31")
},
{
review_id: 586,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-10-30")
},
{
review_id: 585,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-30")
},
{
review_id: 584,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-10-29")
},
{
review_id: 583,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-10-29")
},
{
review_id: 582,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-10-28")
},
{
review_id: 581,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-10-28")
},
{
review_id: 580,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-10-27")
},
{
review_id: 579,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-10-26")
},
{
review_id: 578,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-10-26")
},
{
review_id: 577,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-10-25")
},
{
review_id: 576,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-10-25")
},
{
review_id: 575,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-24")
},
{
review_id: 574,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-10-24")
},
{
review_id: 573,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-10-23")
},
{
review_id: 572,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-10-23")
},
{
review_id: 571,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-10-22")
},
{
review_id: 570,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-10-21")
},
{
review_id: 569,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-10-21")
},
{
review_id: 568,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-10-20")
},
{
review_id: 567,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-10-20")
},
{
review_id: 566,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-10-19")
},
{
review_id: 565,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-19")
},
{
review_id: 564,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-10-18")
},
{
review_id: 563,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-10-17")
},
{
review_id: 562,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-10-17")
},
{
review_id: 561,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-10-16")
},
{
review_id: 560,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-10-16")
},
{
review_id: 559,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-10-15")
},
{
review_id: 558,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-10-15")
},
{
review_id: 557,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-10-14")
},
{
review_id: 556,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-10-14")
},
{
review_id: 555,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-13")
},
{
review_id: 554,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-10-12")
},
{
review_id: 553,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-10-12")
},
{
review_id: 552,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-10-11")
},
{
review_id: 551,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-10-11")
},
{
review_id: 550,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-10-10")
},
{
review_id: 549,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-10-10")
},
{
review_id: 548,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-10-09")
},
{
review_id: 547,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-10-08")
},
{
review_id: 546,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-10-08")
},
{
review_id: 545,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-07")
},
{
review_id: 544,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-10-07")
},
{
review_id: 543,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-10-06")
},
{
review_id: 542,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-10-06")
},
{
review_id: 541,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-10-05")
},
{
review_id: 540,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-10-05")
},
{
review_id: 539,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-10-04")
},
{
review_id: 538,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-10-03")
},
{
review_id: 537,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-10-03")
},
{
review_id: 536,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-10-02")
},
{
review_id: 535,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-10-02")
},
{
review_id: 534,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-10-01")
},
{
review_id: 533,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-10-01")
},
{
review_id: 532,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-30")
},
{
review_id: 531,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-30")
},
{
review_id: 530,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-09-29")
},
{
review_id: 529,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-09-28")
},
{
review_id: 528,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-09-28")
},
{
review_id: 527,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-09-27")
},
{
review_id: 526,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-09-27")
},
{
review_id: 525,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-09-26")
},
{
review_id: 524,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-09-26")
},
{
review_id: 523,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-09-25")
},
{
review_id: 522,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-24")
},
{
review_id: 521,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-24")
},
{
review_id: 520,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-09-23")
},
{
review_id: 519,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-09-23")
},
{
review_id: 518,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-09-22")
},
{
review_id: 517,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-09-22")
},
{
review_id: 516,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-09-21")
},
{
review_id: 515,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-09-21")
},
{
review_id: 514,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-09-20")
},
{
review_id: 513,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-09-19")
},
{
review_id: 512,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-19")
},
{
review_id: 511,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-18")
},
{
review_id: 510,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-09-18")
},
{
review_id: 509,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-09-17")
},
{
review_id: 508,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-09-17")
},
{
review_id: 507,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-09-16")
},
{
review_id: 506,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-09-15")
},
{
review_id: 505,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-09-15")
},
{
review_id: 504,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-09-14")
},
{
review_id: 503,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-09-14")
},
{
review_id: 502,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-13")
},
{
review_id: 501,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-13")
},
{
review_id: 500,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-09-12")
},
{
review_id: 499,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-09-12")
},
{
review_id: 498,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-09-11")
},
{
review_id: 497,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-09-10")
},
{
review_id: 496,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-09-10")
},
{
review_id: 495,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-09-09")
},
{
review_id: 494,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-09-09")
},
{
review_id: 493,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-09-08")
},
{
review_id: 492,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-08")
},
{
review_id: 491,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-07")
},
{
review_id: 490,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-09-06")
},
{
review_id: 489,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-09-06")
},
{
review_id: 488,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-09-05")
},
{
review_id: 487,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-09-05")
},
{
review_id: 486,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-09-04")
},
{
review_id: 485,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-09-04")
},
{
review_id: 484,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-09-03")
},
{
review_id: 483,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-09-03")
},
{
review_id: 482,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-09-02")
},
{
review_id: 481,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-09-01")
},
{
review_id: 480,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-09-01")
},
{
review_id: 479,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-08-31")
},
{
review_id: 478,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-31")
},
{
review_id: 477,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-08-30")
},
{
review_id: 476,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-08-30")
},
{
review_id: 475,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-29")
},
{
review_id: 474,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-08-29")
},
{
review_id: 473,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-08-28")
},
{
review_id: 472,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-08-27")
},
{
review_id: 471,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-08-27")
},
{
review_id: 470,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-08-26")
},
{
review_id: 469,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-08-26")
},
{
review_id: 468,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-25")
},
{
review_id: 467,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-08-25")
},
{
review_id: 466,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-08-24")
},
{
review_id: 465,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-23")
},
{
review_id: 464,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-08-23")
},
{
review_id: 463,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-08-22")
},
{
review_id: 462,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-08-22")
},
{
review_id: 461,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-08-21")
},
{
review_id: 460,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-08-21")
},
{
review_id: 459,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-08-20")
},
{
review_id: 458,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-20")
},
{
review_id: 457,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-08-19")
},
{
review_id: 456,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-08-18")
},
{
review_id: 455,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-18")
},
{
review_id: 454,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-08-17")
},
{
review_id: 453,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-08-17")
},
{
review_id: 452,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-08-16")
},
{
review_id: 451,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-08-16")
},
{
review_id: 450,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-08-15")
},
{
review_id: 449,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-08-14")
},
{
review_id: 448,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-14")
},
{
review_id: 447,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-08-13")
},
{
review_id: 446,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-08-13")
},
{
review_id: 445,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-12")
},
{
review_id: 444,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-08-12")
},
{
review_id: 443,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-08-11")
},
{
review_id: 442,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-08-11")
},
{
review_id: 441,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-08-10")
},
{
review_id: 440,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-08-09")
},
{
review_id: 439,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-08-09")
},
{
review_id: 438,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-08")
},
{
review_id: 437,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-08-08")
},
{
review_id: 436,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-08-07")
},
{
review_id: 435,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-07")
},
{
review_id: 434,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-08-06")
},
{
review_id: 433,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-08-05")
},
{
review_id: 432,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-08-05")
},
{
review_id: 431,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-08-04")
},
{
review_id: 430,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-08-04")
},
{
review_id: 429,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-08-03")
},
{
review_id: 428,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-08-03")
},
{
review_id: 427,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-08-02")
},
{
review_id: 426,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-08-02")
},
{
review_id: 425,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-08-01")
},
{
review_id: 424,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-07-31")
},
{
review_id: 423,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-07-31")
},
{
review_id: 422,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-30")
},
{
review_id: 421,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-30")
},
{
review_id: 420,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-07-29")
},
{
review_id: 419,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-07-29")
},
{
review_id: 418,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-07-28")
},
{
review_id: 417,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-07-28")
},
{
review_id: 416,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-07-27")
},
{
review_id: 415,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-07-26")
},
{
review_id: 414,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-07-26")
},
{
review_id: 413,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-07-25")
},
{
review_id: 412,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-25")
},
{
review_id: 411,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-24")
},
{
review_id: 410,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-07-24")
},
{
review_id: 409,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-07-23")
},
{
review_id: 408,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-07-22")
},
{
review_id: 407,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-07-22")
},
{
review_id: 406,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-07-21")
},
{
review_id: 405,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-07-21")
},
{
review_id: 404,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-07-20")
},
{
review_id: 403,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-07-20")
},
{
review_id: 402,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-19")
},
{
review_id: 401,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-19")
},
{
review_id: 400,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-07-18")
},
{
review_id: 399,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-07-17")
},
{
review_id: 398,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-07-17")
},
{
review_id: 397,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-07-16")
},
{
review_id: 396,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-07-16")
},
{
review_id: 395,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-07-15")
},
{
review_id: 394,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-07-15")
},
{
review_id: 393,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-07-14")
},
{
review_id: 392,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-13")
},
{
review_id: 391,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-13")
},
{
review_id: 390,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-07-12")
},
{
review_id: 389,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-07-12")
},
{
review_id: 388,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-07-11")
},
{
review_id: 387,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-07-11")
},
{
review_id: 386,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-07-10")
},
{
review_id: 385,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-07-10")
},
{
review_id: 384,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-07-09")
},
{
review_id: 383,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-07-08")
},
{
review_id: 382,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-08")
},
{
review_id: 381,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-07")
},
{
review_id: 380,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-07-07")
},
{
review_id: 379,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-07-06")
},
{
review_id: 378,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-07-06")
},
{
review_id: 377,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-07-05")
},
{
review_id: 376,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-07-04")
},
{
review_id: 375,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-07-04")
},
{
review_id: 374,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-07-03")
},
{
review_id: 373,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-07-03")
},
{
review_id: 372,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-07-02")
},
{
review_id: 371,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-07-02")
},
{
review_id: 370,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-07-01")
},
{
review_id: 369,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-07-01")
},
{
review_id: 368,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-30")
},
{
review_id: 367,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-06-29")
},
{
review_id: 366,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-06-29")
},
{
review_id: 365,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-06-28")
},
{
review_id: 364,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-06-28")
},
{
review_id: 363,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-06-27")
},
{
review_id: 362,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-06-27")
},
{
review_id: 361,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-06-26")
},
{
review_id: 360,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-06-25")
},
{
review_id: 359,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-06-25")
},
{
review_id: 358,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-24")
},
{
review_id: 357,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-06-24")
},
{
review_id: 356,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-06-23")
},
{
review_id: 355,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-06-23")
},
{
review_id: 354,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-06-22")
},
{
review_id: 353,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-06-22")
},
{
review_id: 352,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-06-21")
},
{
review_id: 351,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-06-20")
},
{
review_id: 350,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-06-20")
},
{
review_id: 349,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-06-19")
},
{
review_id: 348,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-19")
},
{
review_id: 347,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-06-18")
},
{
review_id: 346,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-06-18")
},
{
review_id: 345,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-06-17")
},
{
review_id: 344,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-06-17")
},
{
review_id: 343,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-06-16")
},
{
review_id: 342,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-06-15")
},
{
review_id: 341,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-06-15")
},
{
review_id: 340,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-06-14")
},
{
review_id: 339,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-06-14")
},
{
review_id: 338,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-13")
},
{
review_id: 337,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-06-13")
},
{
review_id: 336,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-06-12")
},
{
review_id: 335,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-06-11")
},
{
review_id: 334,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-06-11")
},
{
review_id: 333,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-06-10")
},
{
review_id: 332,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-06-10")
},
{
review_id: 331,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-06-09")
},
{
review_id: 330,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-06-09")
},
{
review_id: 329,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-06-08")
},
{
review_id: 328,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-08")
},
{
review_id: 327,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-06-07")
},
{
review_id: 326,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-06-06")
},
{
review_id: 325,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-06-06")
},
{
review_id: 324,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-06-05")
},
{
review_id: 323,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-06-05")
},
{
review_id: 322,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-06-04")
},
{
review_id: 321,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-06-04")
},
{
review_id: 320,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-06-03")
},
{
review_id: 319,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-06-02")
},
{
review_id: 318,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-06-02")
},
{
review_id: 317,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-06-01")
},
{
review_id: 316,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-06-01")
},
{
review_id: 315,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-31")
},
{
review_id: 314,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-05-31")
},
{
review_id: 313,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-05-30")
},
{
review_id: 312,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-30")
},
{
review_id: 311,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-29")
},
{
review_id: 310,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-05-28")
},
{
review_id: 309,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-05-28")
},
{
review_id: 308,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-05-27")
},
{
review_id: 307,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-05-27")
},
{
review_id: 306,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-05-26")
},
{
review_id: 305,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-26")
},
{
review_id: 304,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-05-25")
},
{
review_id: 303,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-05-24")
},
{
review_id: 302,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-24")
},
{
review_id: 301,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-23")
},
{
review_id: 300,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-05-23")
},
{
review_id: 299,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-05-22")
},
{
review_id: 298,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-05-22")
},
{
review_id: 297,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-05-21")
},
{
review_id: 296,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-05-21")
},
{
review_id: 295,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-20")
},
{
review_id: 294,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-05-19")
},
{
review_id: 293,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-05-19")
},
{
review_id: 292,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-18")
},
{
review_id: 291,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-18")
},
{
review_id: 290,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-05-17")
},
{
review_id: 289,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-05-17")
},
{
review_id: 288,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-05-16")
},
{
review_id: 287,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-05-16")
},
{
review_id: 286,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-05-15")
},
{
review_id: 285,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-14")
},
{
review_id: 284,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-05-14")
},
{
review_id: 283,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-05-13")
},
{
review_id: 282,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-13")
},
{
review_id: 281,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-12")
},
{
review_id: 280,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-05-12")
},
{
review_id: 279,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-05-11")
},
{
review_id: 278,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-05-10")
},
{
review_id: 277,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-05-10")
},
{
review_id: 276,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-05-09")
},
{
review_id: 275,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-09")
},
{
review_id: 274,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-05-08")
},
{
review_id: 273,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-05-08")
},
{
review_id: 272,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-07")
},
{
review_id: 271,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-07")
},
{
review_id: 270,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-05-06")
},
{
review_id: 269,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-05-05")
},
{
review_id: 268,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-05-05")
},
{
review_id: 267,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-05-04")
},
{
review_id: 266,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-05-04")
},
{
review_id: 265,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-05-03")
},
{
review_id: 264,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-05-03")
},
{
review_id: 263,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-05-02")
},
{
review_id: 262,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-05-01")
},
{
review_id: 261,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-05-01")
},
{
review_id: 260,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-04-30")
},
{
review_id: 259,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-04-30")
},
{
review_id: 258,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-29")
},
{
review_id: 257,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-04-29")
},
{
review_id: 256,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-04-28")
},
{
review_id: 255,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-04-28")
},
{
review_id: 254,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-04-27")
},
{
review_id: 253,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-04-26")
},
{
review_id: 252,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-04-26")
},
{
review_id: 251,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-04-25")
},
{
review_id: 250,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-04-25")
},
{
review_id: 249,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-04-24")
},
{
review_id: 248,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-24")
},
{
review_id: 247,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-04-23")
},
{
review_id: 246,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-04-22")
},
{
review_id: 245,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-04-22")
},
{
review_id: 244,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-04-21")
},
{
review_id: 243,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-04-21")
},
{
review_id: 242,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-04-20")
},
{
review_id: 241,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-04-20")
},
{
review_id: 240,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-04-19")
},
{
review_id: 239,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-04-19")
},
{
review_id: 238,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-18")
},
{
review_id: 237,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-04-17")
},
{
review_id: 236,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-04-17")
},
{
review_id: 235,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-04-16")
},
{
review_id: 234,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-04-16")
},
{
review_id: 233,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-04-15")
},
{
review_id: 232,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-04-15")
},
{
review_id: 231,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-04-14")
},
{
review_id: 230,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-04-14")
},
{
review_id: 229,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-04-13")
},
{
review_id: 228,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-12")
},
{
review_id: 227,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-04-12")
},
{
review_id: 226,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-04-11")
},
{
review_id: 225,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-04-11")
},
{
review_id: 224,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-04-10")
},
{
review_id: 223,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-04-10")
},
{
review_id: 222,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-04-09")
},
{
review_id: 221,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-04-08")
},
{
review_id: 220,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-04-08")
},
{
review_id: 219,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-04-07")
},
{
review_id: 218,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-07")
},
{
review_id: 217,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-04-06")
},
{
review_id: 216,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-04-06")
},
{
review_id: 215,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-04-05")
},
{
review_id: 214,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-04-05")
},
{
review_id: 213,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-04-04")
},
{
review_id: 212,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-04-03")
},
{
review_id: 211,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-04-03")
},
{
review_id: 210,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-04-02")
},
{
review_id: 209,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-04-02")
},
{
review_id: 208,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-04-01")
},
{
review_id: 207,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-04-01")
},
{
review_id: 206,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-03-31")
},
{
review_id: 205,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-30")
},
{
review_id: 204,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-03-30")
},
{
review_id: 203,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-03-29")
},
{
review_id: 202,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-29")
},
{
review_id: 201,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-03-28")
},
{
review_id: 200,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-03-28")
},
{
review_id: 199,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-03-27")
},
{
review_id: 198,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-03-27")
},
{
review_id: 197,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-03-26")
},
{
review_id: 196,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-03-25")
},
{
review_id: 195,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-25")
},
{
review_id: 194,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-03-24")
},
{
review_id: 193,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-03-24")
},
{
review_id: 192,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-23")
},
{
review_id: 191,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-03-23")
},
{
review_id: 190,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-03-22")
},
{
review_id: 189,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-03-21")
},
{
review_id: 188,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-03-21")
},
{
review_id: 187,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-03-20")
},
{
review_id: 186,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-03-20")
},
{
review_id: 185,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-19")
},
{
review_id: 184,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-03-19")
},
{
review_id: 183,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-03-18")
},
{
review_id: 182,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-18")
},
{
review_id: 181,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-03-17")
},
{
review_id: 180,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-03-16")
},
{
review_id: 179,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-03-16")
},
{
review_id: 178,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-03-15")
},
{
review_id: 177,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-03-15")
},
{
review_id: 176,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-03-14")
},
{
review_id: 175,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-14")
},
{
review_id: 174,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-03-13")
},
{
review_id: 173,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-03-13")
},
{
review_id: 172,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-12")
},
{
review_id: 171,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-03-11")
},
{
review_id: 170,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-03-11")
},
{
review_id: 169,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-03-10")
},
{
review_id: 168,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-03-10")
},
{
review_id: 167,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-03-09")
},
{
review_id: 166,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-03-09")
},
{
review_id: 165,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-08")
},
{
review_id: 164,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-03-07")
},
{
review_id: 163,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-03-07")
},
{
review_id: 162,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-06")
},
{
review_id: 161,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-03-06")
},
{
review_id: 160,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-03-05")
},
{
review_id: 159,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-03-05")
},
{
review_id: 158,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-03-04")
},
{
review_id: 157,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-03-04")
},
{
review_id: 156,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-03-03")
},
{
review_id: 155,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-03-02")
},
{
review_id: 154,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-03-02")
},
{
review_id: 153,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-03-01")
},
{
review_id: 152,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-03-01")
},
{
review_id: 151,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-02-28")
},
{
review_id: 150,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-02-28")
},
{
review_id: 149,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-02-27")
},
{
review_id: 148,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-02-26")
},
{
review_id: 147,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-02-26")
},
{
review_id: 146,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-02-25")
},
{
review_id: 145,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-02-25")
},
{
review_id: 144,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-02-24")
},
{
review_id: 143,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-02-24")
},
{
review_id: 142,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-02-23")
},
{
review_id: 141,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-02-23")
},
{
review_id: 140,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-02-22")
},
{
review_id: 139,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-02-21")
},
{
review_id: 138,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-02-21")
},
{
review_id: 137,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-02-20")
},
{
review_id: 136,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-02-20")
},
{
review_id: 135,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-02-19")
},
{
review_id: 134,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-02-19")
},
{
review_id: 133,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-02-18")
},
{
review_id: 132,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-02-17")
},
{
review_id: 131,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-02-17")
},
{
review_id: 130,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-02-16")
},
{
review_id: 129,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-02-16")
},
{
review_id: 128,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-02-15")
},
{
review_id: 127,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-02-15")
},
{
review_id: 126,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-02-14")
},
{
review_id: 125,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-02-14")
},
{
review_id: 124,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-02-13")
},
{
review_id: 123,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-02-12")
},
{
review_id: 122,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-02-12")
},
{
review_id: 121,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-02-11")
},
{
review_id: 120,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-02-11")
},
{
review_id: 119,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-02-10")
},
{
review_id: 118,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-02-10")
},
{
review_id: 117,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-02-09")
},
{
review_id: 116,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-02-09")
},
{
review_id: 115,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-02-08")
},
{
review_id: 114,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-02-07")
},
{
review_id: 113,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-02-07")
},
{
review_id: 112,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-02-06")
},
{
review_id: 111,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-02-06")
},
{
review_id: 110,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-02-05")
},
{
review_id: 109,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-02-05")
},
{
review_id: 108,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-02-04")
},
{
review_id: 107,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-02-03")
},
{
review_id: 106,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-02-03")
},
{
review_id: 105,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-02-02")
},
{
review_id: 104,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-02-02")
},
{
review_id: 103,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-02-01")
},
{
review_id: 102,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-02-01")
},
{
review_id: 101,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-31")
},
{
review_id: 100,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-01-31")
},
{
review_id: 99,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-01-30")
},
{
review_id: 98,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-29")
},
{
review_id: 97,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-01-29")
},
{
review_id: 96,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-01-28")
},
{
review_id: 95,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-01-28")
},
{
review_id: 94,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-01-27")
},
{
review_id: 93,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-01-27")
},
{
review_id: 92,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-01-26")
},
{
review_id: 91,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-25")
},
{
review_id: 90,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-01-25")
},
{
review_id: 89,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-01-24")
},
{
review_id: 88,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-24")
},
{
review_id: 87,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-01-23")
},
{
review_id: 86,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-01-23")
},
{
review_id: 85,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-01-22")
},
{
review_id: 84,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-01-22")
},
{
review_id: 83,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-01-21")
},
{
review_id: 82,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-01-20")
},
{
review_id: 81,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-20")
},
{
review_id: 80,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-01-19")
},
{
review_id: 79,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-01-19")
},
{
review_id: 78,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-18")
},
{
review_id: 77,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-01-18")
},
{
review_id: 76,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-01-17")
},
{
review_id: 75,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-01-16")
},
{
review_id: 74,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-01-16")
},
{
review_id: 73,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-01-15")
},
{
review_id: 72,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-01-15")
},
{
review_id: 71,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-14")
},
{
review_id: 70,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-01-14")
},
{
review_id: 69,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-01-13")
},
{
review_id: 68,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-13")
},
{
review_id: 67,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-01-12")
},
{
review_id: 66,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2018-01-11")
},
{
review_id: 65,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-01-11")
},
{
review_id: 64,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2018-01-10")
},
{
review_id: 63,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2018-01-10")
},
{
review_id: 62,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2018-01-09")
},
{
review_id: 61,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-09")
},
{
review_id: 60,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2018-01-08")
},
{
review_id: 59,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2018-01-08")
},
{
review_id: 58,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-07")
},
{
review_id: 57,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2018-01-06")
},
{
review_id: 56,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2018-01-06")
},
{
review_id: 55,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2018-01-05")
},
{
review_id: 54,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2018-01-05")
},
{
review_id: 53,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2018-01-04")
},
{
review_id: 52,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2018-01-04")
},
{
review_id: 51,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2018-01-03")
},
{
review_id: 50,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2018-01-02")
},
{
review_id: 49,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2018-01-02")
},
{
review_id: 48,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2018-01-01")
},
{
review_id: 47,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2018-01-01")
},
{
review_id: 46,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2017-12-31")
},
{
review_id: 45,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2017-12-31")
},
{
review_id: 44,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2017-12-30")
},
{
review_id: 43,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2017-12-30")
},
{
review_id: 42,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2017-12-29")
},
{
review_id: 41,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2017-12-28")
},
{
review_id: 40,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2017-12-28")
},
{
review_id: 39,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2017-12-27")
},
{
review_id: 38,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2017-12-27")
},
{
review_id: 37,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2017-12-26")
},
{
review_id: 36,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2017-12-26")
},
{
review_id: 35,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2017-12-25")
},
{
review_id: 34,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2017-12-24")
},
{
review_id: 33,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2017-12-24")
},
{
review_id: 32,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2017-12-23")
},
{
review_id: 31,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2017-12-23")
},
{
review_id: 30,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2017-12-22")
},
{
review_id: 29,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2017-12-22")
},
{
review_id: 28,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2017-12-21")
},
{
review_id: 27,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2017-12-21")
},
{
review_id: 26,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2017-12-20")
},
{
review_id: 25,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2017-12-19")
},
{
review_id: 24,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2017-12-19")
},
{
review_id: 23,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2017-12-18")
},
{
review_id: 22,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2017-12-18")
},
{
review_id: 21,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2017-12-17")
},
{
review_id: 20,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2017-12-17")
},
{
review_id: 19,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2017-12-16")
},
{
review_id: 18,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2017-12-15")
},
{
review_id: 17,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2017-12-15")
},
{
review_id: 16,
review_author: "Mina",
review_text: "Better than expected.",
published_date: ISODate("2017-12-14")
},
{
review_id: 15,
review_author: "Luca",
review_text: "Arrived late, works fine.",
published_date: ISODate("2017-12-14")
},
{
review_id: 14,
review_author: "Keiko",
review_text: "Would buy again.",
published_date: ISODate("2017-12-13")
},
{
review_id: 13,
review_author: "Jonas",
review_text: "Does the job.",
published_date: ISODate("2017-12-13")
},
{
review_id: 12,
review_author: "Ines",
review_text: "Good value for the price.",
published_date: ISODate("2017-12-12")
},
{
review_id: 11,
review_author: "Hoa",
review_text: "Sturdy and well made.",
published_date: ISODate("2017-12-12")
},
{
review_id: 10,
review_author: "Goran",
review_text: "Works as described.",
published_date: ISODate("2017-12-11")
},
{
review_id: 9,
review_author: "Farah",
review_text: "Solid widget.",
published_date: ISODate("2017-12-10")
},
{
review_id: 8,
review_author: "Emeka",
review_text: "My toolbox favourite.",
published_date: ISODate("2017-12-10")
},
{
review_id: 7,
review_author: "Dagny",
review_text: "Not bad.",
published_date: ISODate("2017-12-09")
},
{
review_id: 6,
review_author: "Chen",
review_text: "Better than expected.",
published_date: ISODate("2017-12-09")
},
{
review_id: 5,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
published_date: ISODate("2017-12-08")
},
{
review_id: 4,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2017-12-08")
},
{
review_id: 3,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2017-12-07")
},
{
review_id: 2,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2017-12-07")
},
{
review_id: 1,
review_author: "Hans",
review_text: "Meh, it's ok.",
published_date: ISODate("2017-12-06")
}
]
}
] )

db.products.arrayLength(ObjectId("507f1f77bcf86cd993384520"), "reviews")
// The Subset pattern as a policy: the 10 newest reviews stay embedded, every review goes to
// the `review` archive, linked by `product_id` and identified by `review_id`. Reads of
// `products` still return every review; `system.stored.products` shows what is embedded.
db.products.setPattern({ subset: "reviews", keep: 10, sortBy: { published_date: -1 }, archiveCollection: "review", linkField: "product_id", identity: "review_id" })
show patterns
db.verifyPatterns()
db['system.stored.products'].findOne({}, { name: 1, "reviews.review_id": 1, "reviews.published_date": 1 })
db.products.arrayLength(ObjectId("507f1f77bcf86cd993384520"), "reviews")
db.products.arrayPage(ObjectId("507f1f77bcf86cd993384520"), "reviews", { skip: 9, limit: 2 })
db.products.arrayPage(ObjectId("507f1f77bcf86cd993384520"), "reviews", { skip: 785 })
db.review.countDocuments({ product_id: ObjectId("507f1f77bcf86cd993384520") })
db.products.find({ "reviews.review_author": "Hans" }, { name: 1 })

// Part 2. The seed's hand-made split. Start again: removing the policy folds every review
// back into the product (and drops the archive); then the product goes too, since the
// seed's second statement inserts the same _id.
db.products.removePattern("reviews")
show collections
db.products.drop()

db.collection('products').insertOne( [
{
_id: ObjectId("507f1f77bcf86cd993384520"),
name: "Super Widget",
description: "This is the most useful item in your toolbox.",
price: { value: Decimal128("119.99"), currency: "USD" },
reviews: [
{
review_id: 786,
review_author: "Kristina",
review_text: "This is indeed an amazing widget.",
published_date: ISODate("2019-02-18")
},
{
review_id: 785,
review_author: "Trina",
review_text: "Very nice product, slow shipping.",
published_date: ISODate("2019-02-17")
},
{
review_id: 784,
review_author: "Amara",
review_text: "Would buy again.",
published_date: ISODate("2019-02-16T17:00:00Z")
},
{
review_id: 783,
review_author: "Hans",
review_text: "Does the job.",
published_date: ISODate("2019-02-16T16:00:00Z")
},
{
review_id: 782,
review_author: "Pablo",
review_text: "Good value for the price.",
published_date: ISODate("2019-02-16T15:00:00Z")
},
{
review_id: 781,
review_author: "Trina",
review_text: "Sturdy and well made.",
published_date: ISODate("2019-02-16T14:00:00Z")
},
{
review_id: 780,
review_author: "Kristina",
review_text: "Works as described.",
published_date: ISODate("2019-02-16T13:00:00Z")
},
{
review_id: 779,
review_author: "Priya",
review_text: "Solid widget.",
published_date: ISODate("2019-02-16T12:00:00Z")
},
{
review_id: 778,
review_author: "Olu",
review_text: "My toolbox favourite.",
published_date: ISODate("2019-02-16T11:00:00Z")
},
{
review_id: 777,
review_author: "Nils",
review_text: "Not bad.",
published_date: ISODate("2019-02-16T10:00:00Z")
},
{
review_id: 776,
review_author: "Pablo",
review_text: "Amazing!",
published_date: ISODate("2019-02-15")
}
]
}
] )

db.collection('review').insertOne( [
{
review_id: 786,
review_author: "Kristina",
review_text: "This is indeed an amazing widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-18")
},
{
review_id: 785,
review_author: "Trina",
review_text: "Very nice product, slow shipping.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-17")
},
{
review_id: 784,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T17:00:00Z")
},
{
review_id: 783,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T16:00:00Z")
},
{
review_id: 782,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T15:00:00Z")
},
{
review_id: 781,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T14:00:00Z")
},
{
review_id: 780,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T13:00:00Z")
},
{
review_id: 779,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T12:00:00Z")
},
{
review_id: 778,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T11:00:00Z")
},
{
review_id: 777,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-16T10:00:00Z")
},
{
review_id: 776,
review_author: "Pablo",
review_text: "Amazing!",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-15")
},
{
review_id: 775,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-14")
},
{
review_id: 774,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-13")
},
{
review_id: 773,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-12")
},
{
review_id: 772,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-12")
},
{
review_id: 771,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-11")
},
{
review_id: 770,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-11")
},
{
review_id: 769,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-10")
},
{
review_id: 768,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-10")
},
{
review_id: 767,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-09")
},
{
review_id: 766,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-08")
},
{
review_id: 765,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-08")
},
{
review_id: 764,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-07")
},
{
review_id: 763,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-07")
},
{
review_id: 762,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-06")
},
{
review_id: 761,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-06")
},
{
review_id: 760,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-05")
},
{
review_id: 759,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-05")
},
{
review_id: 758,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-04")
},
{
review_id: 757,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-03")
},
{
review_id: 756,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-03")
},
{
review_id: 755,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-02")
},
{
review_id: 754,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-02")
},
{
review_id: 753,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-01")
},
{
review_id: 752,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-02-01")
},
{
review_id: 751,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-31")
},
{
review_id: 750,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-30")
},
{
review_id: 749,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-30")
},
{
review_id: 748,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-29")
},
{
review_id: 747,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-29")
},
{
review_id: 746,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-28")
},
{
review_id: 745,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-28")
},
{
review_id: 744,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-27")
},
{
review_id: 743,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-27")
},
{
review_id: 742,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-26")
},
{
review_id: 741,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-25")
},
{
review_id: 740,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-25")
},
{
review_id: 739,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-24")
},
{
review_id: 738,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-24")
},
{
review_id: 737,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-23")
},
{
review_id: 736,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-23")
},
{
review_id: 735,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-22")
},
{
review_id: 734,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-21")
},
{
review_id: 733,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-21")
},
{
review_id: 732,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-20")
},
{
review_id: 731,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-20")
},
{
review_id: 730,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-19")
},
{
review_id: 729,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-19")
},
{
review_id: 728,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-18")
},
{
review_id: 727,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-18")
},
{
review_id: 726,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-17")
},
{
review_id: 725,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-16")
},
{
review_id: 724,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-16")
},
{
review_id: 723,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-15")
},
{
review_id: 722,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-15")
},
{
review_id: 721,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-14")
},
{
review_id: 720,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-14")
},
{
review_id: 719,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-13")
},
{
review_id: 718,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-12")
},
{
review_id: 717,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-12")
},
{
review_id: 716,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-11")
},
{
review_id: 715,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-11")
},
{
review_id: 714,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-10")
},
{
review_id: 713,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-10")
},
{
review_id: 712,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-09")
},
{
review_id: 711,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-09")
},
{
review_id: 710,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-08")
},
{
review_id: 709,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-07")
},
{
review_id: 708,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-07")
},
{
review_id: 707,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-06")
},
{
review_id: 706,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-06")
},
{
review_id: 705,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-05")
},
{
review_id: 704,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-05")
},
{
review_id: 703,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-04")
},
{
review_id: 702,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-04")
},
{
review_id: 701,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-03")
},
{
review_id: 700,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-02")
},
{
review_id: 699,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-02")
},
{
review_id: 698,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-01")
},
{
review_id: 697,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2019-01-01")
},
{
review_id: 696,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-31")
},
{
review_id: 695,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-31")
},
{
review_id: 694,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-30")
},
{
review_id: 693,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-29")
},
{
review_id: 692,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-29")
},
{
review_id: 691,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-28")
},
{
review_id: 690,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-28")
},
{
review_id: 689,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-27")
},
{
review_id: 688,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-27")
},
{
review_id: 687,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-26")
},
{
review_id: 686,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-26")
},
{
review_id: 685,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-25")
},
{
review_id: 684,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-24")
},
{
review_id: 683,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-24")
},
{
review_id: 682,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-23")
},
{
review_id: 681,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-23")
},
{
review_id: 680,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-22")
},
{
review_id: 679,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-22")
},
{
review_id: 678,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-21")
},
{
review_id: 677,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-20")
},
{
review_id: 676,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-20")
},
{
review_id: 675,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-19")
},
{
review_id: 674,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-19")
},
{
review_id: 673,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-18")
},
{
review_id: 672,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-18")
},
{
review_id: 671,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-17")
},
{
review_id: 670,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-17")
},
{
review_id: 669,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-16")
},
{
review_id: 668,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-15")
},
{
review_id: 667,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-15")
},
{
review_id: 666,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-14")
},
{
review_id: 665,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-14")
},
{
review_id: 664,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-13")
},
{
review_id: 663,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-13")
},
{
review_id: 662,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-12")
},
{
review_id: 661,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-11")
},
{
review_id: 660,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-11")
},
{
review_id: 659,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-10")
},
{
review_id: 658,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-10")
},
{
review_id: 657,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-09")
},
{
review_id: 656,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-09")
},
{
review_id: 655,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-08")
},
{
review_id: 654,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-08")
},
{
review_id: 653,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-07")
},
{
review_id: 652,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-06")
},
{
review_id: 651,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-06")
},
{
review_id: 650,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-05")
},
{
review_id: 649,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-05")
},
{
review_id: 648,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-04")
},
{
review_id: 647,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-04")
},
{
review_id: 646,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-03")
},
{
review_id: 645,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-03")
},
{
review_id: 644,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-02")
},
{
review_id: 643,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-01")
},
{
review_id: 642,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-12-01")
},
{
review_id: 641,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-30")
},
{
review_id: 640,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-30")
},
{
review_id: 639,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-29")
},
{
review_id: 638,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-29")
},
{
review_id: 637,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-28")
},
{
review_id: 636,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-27")
},
{
review_id: 635,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-27")
},
{
review_id: 634,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-26")
},
{
review_id: 633,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-26")
},
{
review_id: 632,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-25")
},
{
review_id: 631,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-25")
},
{
review_id: 630,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-24")
},
{
review_id: 629,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-24")
},
{
review_id: 628,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-23")
},
{
review_id: 627,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-22")
},
{
review_id: 626,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-22")
},
{
review_id: 625,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-21")
},
{
review_id: 624,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-21")
},
{
review_id: 623,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-20")
},
{
review_id: 622,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-20")
},
{
review_id: 621,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-19")
},
{
review_id: 620,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-18")
},
{
review_id: 619,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-18")
},
{
review_id: 618,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-17")
},
{
review_id: 617,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-17")
},
{
review_id: 616,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-16")
},
{
review_id: 615,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-16")
},
{
review_id: 614,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-15")
},
{
review_id: 613,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-15")
},
{
review_id: 612,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-14")
},
{
review_id: 611,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-13")
},
{
review_id: 610,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-13")
},
{
review_id: 609,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-12")
},
{
review_id: 608,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-12")
},
{
review_id: 607,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-11")
},
{
review_id: 606,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-11")
},
{
review_id: 605,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-10")
},
{
review_id: 604,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-09")
},
{
review_id: 603,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-09")
},
{
review_id: 602,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-08")
},
{
review_id: 601,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-08")
},
{
review_id: 600,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-07")
},
{
review_id: 599,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-07")
},
{
review_id: 598,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-06")
},
{
review_id: 597,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-06")
},
{
review_id: 596,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-05")
},
{
review_id: 595,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-04")
},
{
review_id: 594,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-04")
},
{
review_id: 593,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-03")
},
{
review_id: 592,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-03")
},
{
review_id: 591,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-02")
},
{
review_id: 590,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-02")
},
{
review_id: 589,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-01")
},
{
review_id: 588,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-11-01")
},
{
review_id: 587,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-31")
},
{
review_id: 586,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-30")
},
{
review_id: 585,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-30")
},
{
review_id: 584,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-29")
},
{
review_id: 583,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-29")
},
{
review_id: 582,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-28")
},
{
review_id: 581,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-28")
},
{
review_id: 580,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-27")
},
{
review_id: 579,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-26")
},
{
review_id: 578,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-26")
},
{
review_id: 577,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-25")
},
{
review_id: 576,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-25")
},
{
review_id: 575,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-24")
},
{
review_id: 574,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-24")
},
{
review_id: 573,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-23")
},
{
review_id: 572,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-23")
},
{
review_id: 571,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-22")
},
{
review_id: 570,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-21")
},
{
review_id: 569,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-21")
},
{
review_id: 568,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-20")
},
{
review_id: 567,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-20")
},
{
review_id: 566,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-19")
},
{
review_id: 565,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-19")
},
{
review_id: 564,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-18")
},
{
review_id: 563,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-17")
},
{
review_id: 562,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-17")
},
{
review_id: 561,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-16")
},
{
review_id: 560,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-16")
},
{
review_id: 559,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-15")
},
{
review_id: 558,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-15")
},
{
review_id: 557,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-14")
},
{
review_id: 556,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-14")
},
{
review_id: 555,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-13")
},
{
review_id: 554,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-12")
},
{
review_id: 553,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-12")
},
{
review_id: 552,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-11")
},
{
review_id: 551,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-11")
},
{
review_id: 550,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-10")
},
{
review_id: 549,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-10")
},
{
review_id: 548,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-09")
},
{
review_id: 547,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-08")
},
{
review_id: 546,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-08")
},
{
review_id: 545,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-07")
},
{
review_id: 544,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-07")
},
{
review_id: 543,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-06")
},
{
review_id: 542,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-06")
},
{
review_id: 541,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-05")
},
{
review_id: 540,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-05")
},
{
review_id: 539,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-04")
},
{
review_id: 538,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-03")
},
{
review_id: 537,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-03")
},
{
review_id: 536,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-02")
},
{
review_id: 535,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-02")
},
{
review_id: 534,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-01")
},
{
review_id: 533,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-10-01")
},
{
review_id: 532,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-30")
},
{
review_id: 531,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-30")
},
{
review_id: 530,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-29")
},
{
review_id: 529,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-28")
},
{
review_id: 528,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-28")
},
{
review_id: 527,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-27")
},
{
review_id: 526,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-27")
},
{
review_id: 525,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-26")
},
{
review_id: 524,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-26")
},
{
review_id: 523,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-25")
},
{
review_id: 522,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-24")
},
{
review_id: 521,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-24")
},
{
review_id: 520,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-23")
},
{
review_id: 519,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-23")
},
{
review_id: 518,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-22")
},
{
review_id: 517,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-22")
},
{
review_id: 516,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-21")
},
{
review_id: 515,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-21")
},
{
review_id: 514,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-20")
},
{
review_id: 513,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-19")
},
{
review_id: 512,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-19")
},
{
review_id: 511,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-18")
},
{
review_id: 510,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-18")
},
{
review_id: 509,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-17")
},
{
review_id: 508,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-17")
},
{
review_id: 507,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-16")
},
{
review_id: 506,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-15")
},
{
review_id: 505,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-15")
},
{
review_id: 504,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-14")
},
{
review_id: 503,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-14")
},
{
review_id: 502,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-13")
},
{
review_id: 501,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-13")
},
{
review_id: 500,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-12")
},
{
review_id: 499,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-12")
},
{
review_id: 498,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-11")
},
{
review_id: 497,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-10")
},
{
review_id: 496,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-10")
},
{
review_id: 495,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-09")
},
{
review_id: 494,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-09")
},
{
review_id: 493,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-08")
},
{
review_id: 492,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-08")
},
{
review_id: 491,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-07")
},
{
review_id: 490,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-06")
},
{
review_id: 489,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-06")
},
{
review_id: 488,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-05")
},
{
review_id: 487,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-05")
},
{
review_id: 486,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-04")
},
{
review_id: 485,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-04")
},
{
review_id: 484,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-03")
},
{
review_id: 483,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-03")
},
{
review_id: 482,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-02")
},
{
review_id: 481,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-01")
},
{
review_id: 480,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-09-01")
},
{
review_id: 479,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-31")
},
{
review_id: 478,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-31")
},
{
review_id: 477,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-30")
},
{
review_id: 476,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-30")
},
{
review_id: 475,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-29")
},
{
review_id: 474,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-29")
},
{
review_id: 473,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-28")
},
{
review_id: 472,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-27")
},
{
review_id: 471,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-27")
},
{
review_id: 470,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-26")
},
{
review_id: 469,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-26")
},
{
review_id: 468,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-25")
},
{
review_id: 467,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-25")
},
{
review_id: 466,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-24")
},
{
review_id: 465,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-23")
},
{
review_id: 464,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-23")
},
{
review_id: 463,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-22")
},
{
review_id: 462,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-22")
},
{
review_id: 461,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-21")
},
{
review_id: 460,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-21")
},
{
review_id: 459,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-20")
},
{
review_id: 458,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-20")
},
{
review_id: 457,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-19")
},
{
review_id: 456,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-18")
},
{
review_id: 455,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-18")
},
{
review_id: 454,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-17")
},
{
review_id: 453,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-17")
},
{
review_id: 452,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-16")
},
{
review_id: 451,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-16")
},
{
review_id: 450,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-15")
},
{
review_id: 449,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-14")
},
{
review_id: 448,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-14")
},
{
review_id: 447,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-13")
},
{
review_id: 446,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-13")
},
{
review_id: 445,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-12")
},
{
review_id: 444,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-12")
},
{
review_id: 443,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-11")
},
{
review_id: 442,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-11")
},
{
review_id: 441,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-10")
},
{
review_id: 440,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-09")
},
{
review_id: 439,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-09")
},
{
review_id: 438,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-08")
},
{
review_id: 437,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-08")
},
{
review_id: 436,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-07")
},
{
review_id: 435,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-07")
},
{
review_id: 434,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-06")
},
{
review_id: 433,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-05")
},
{
review_id: 432,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-05")
},
{
review_id: 431,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-04")
},
{
review_id: 430,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-04")
},
{
review_id: 429,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-03")
},
{
review_id: 428,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-03")
},
{
review_id: 427,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-02")
},
{
review_id: 426,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-02")
},
{
review_id: 425,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-08-01")
},
{
review_id: 424,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-31")
},
{
review_id: 423,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-31")
},
{
review_id: 422,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-30")
},
{
review_id: 421,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-30")
},
{
review_id: 420,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-29")
},
{
review_id: 419,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-29")
},
{
review_id: 418,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-28")
},
{
review_id: 417,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-28")
},
{
review_id: 416,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-27")
},
{
review_id: 415,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-26")
},
{
review_id: 414,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-26")
},
{
review_id: 413,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-25")
},
{
review_id: 412,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-25")
},
{
review_id: 411,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-24")
},
{
review_id: 410,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-24")
},
{
review_id: 409,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-23")
},
{
review_id: 408,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-22")
},
{
review_id: 407,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-22")
},
{
review_id: 406,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-21")
},
{
review_id: 405,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-21")
},
{
review_id: 404,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-20")
},
{
review_id: 403,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-20")
},
{
review_id: 402,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-19")
},
{
review_id: 401,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-19")
},
{
review_id: 400,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-18")
},
{
review_id: 399,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-17")
},
{
review_id: 398,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-17")
},
{
review_id: 397,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-16")
},
{
review_id: 396,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-16")
},
{
review_id: 395,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-15")
},
{
review_id: 394,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-15")
},
{
review_id: 393,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-14")
},
{
review_id: 392,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-13")
},
{
review_id: 391,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-13")
},
{
review_id: 390,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-12")
},
{
review_id: 389,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-12")
},
{
review_id: 388,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-11")
},
{
review_id: 387,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-11")
},
{
review_id: 386,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-10")
},
{
review_id: 385,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-10")
},
{
review_id: 384,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-09")
},
{
review_id: 383,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-08")
},
{
review_id: 382,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-08")
},
{
review_id: 381,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-07")
},
{
review_id: 380,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-07")
},
{
review_id: 379,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-06")
},
{
review_id: 378,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-06")
},
{
review_id: 377,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-05")
},
{
review_id: 376,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-04")
},
{
review_id: 375,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-04")
},
{
review_id: 374,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-03")
},
{
review_id: 373,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-03")
},
{
review_id: 372,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-02")
},
{
review_id: 371,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-02")
},
{
review_id: 370,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-01")
},
{
review_id: 369,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-07-01")
},
{
review_id: 368,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-30")
},
{
review_id: 367,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-29")
},
{
review_id: 366,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-29")
},
{
review_id: 365,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-28")
},
{
review_id: 364,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-28")
},
{
review_id: 363,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-27")
},
{
review_id: 362,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-27")
},
{
review_id: 361,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-26")
},
{
review_id: 360,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-25")
},
{
review_id: 359,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-25")
},
{
review_id: 358,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-24")
},
{
review_id: 357,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-24")
},
{
review_id: 356,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-23")
},
{
review_id: 355,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-23")
},
{
review_id: 354,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-22")
},
{
review_id: 353,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-22")
},
{
review_id: 352,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-21")
},
{
review_id: 351,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-20")
},
{
review_id: 350,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-20")
},
{
review_id: 349,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-19")
},
{
review_id: 348,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-19")
},
{
review_id: 347,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-18")
},
{
review_id: 346,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-18")
},
{
review_id: 345,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-17")
},
{
review_id: 344,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-17")
},
{
review_id: 343,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-16")
},
{
review_id: 342,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-15")
},
{
review_id: 341,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-15")
},
{
review_id: 340,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-14")
},
{
review_id: 339,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-14")
},
{
review_id: 338,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-13")
},
{
review_id: 337,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-13")
},
{
review_id: 336,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-12")
},
{
review_id: 335,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-11")
},
{
review_id: 334,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-11")
},
{
review_id: 333,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-10")
},
{
review_id: 332,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-10")
},
{
review_id: 331,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-09")
},
{
review_id: 330,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-09")
},
{
review_id: 329,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-08")
},
{
review_id: 328,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-08")
},
{
review_id: 327,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-07")
},
{
review_id: 326,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-06")
},
{
review_id: 325,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-06")
},
{
review_id: 324,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-05")
},
{
review_id: 323,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-05")
},
{
review_id: 322,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-04")
},
{
review_id: 321,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-04")
},
{
review_id: 320,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-03")
},
{
review_id: 319,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-02")
},
{
review_id: 318,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-02")
},
{
review_id: 317,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-01")
},
{
review_id: 316,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-06-01")
},
{
review_id: 315,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-31")
},
{
review_id: 314,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-31")
},
{
review_id: 313,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-30")
},
{
review_id: 312,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-30")
},
{
review_id: 311,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-29")
},
{
review_id: 310,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-28")
},
{
review_id: 309,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-28")
},
{
review_id: 308,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-27")
},
{
review_id: 307,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-27")
},
{
review_id: 306,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-26")
},
{
review_id: 305,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-26")
},
{
review_id: 304,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-25")
},
{
review_id: 303,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-24")
},
{
review_id: 302,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-24")
},
{
review_id: 301,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-23")
},
{
review_id: 300,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-23")
},
{
review_id: 299,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-22")
},
{
review_id: 298,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-22")
},
{
review_id: 297,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-21")
},
{
review_id: 296,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-21")
},
{
review_id: 295,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-20")
},
{
review_id: 294,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-19")
},
{
review_id: 293,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-19")
},
{
review_id: 292,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-18")
},
{
review_id: 291,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-18")
},
{
review_id: 290,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-17")
},
{
review_id: 289,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-17")
},
{
review_id: 288,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-16")
},
{
review_id: 287,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-16")
},
{
review_id: 286,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-15")
},
{
review_id: 285,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-14")
},
{
review_id: 284,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-14")
},
{
review_id: 283,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-13")
},
{
review_id: 282,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-13")
},
{
review_id: 281,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-12")
},
{
review_id: 280,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-12")
},
{
review_id: 279,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-11")
},
{
review_id: 278,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-10")
},
{
review_id: 277,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-10")
},
{
review_id: 276,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-09")
},
{
review_id: 275,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-09")
},
{
review_id: 274,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-08")
},
{
review_id: 273,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-08")
},
{
review_id: 272,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-07")
},
{
review_id: 271,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-07")
},
{
review_id: 270,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-06")
},
{
review_id: 269,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-05")
},
{
review_id: 268,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-05")
},
{
review_id: 267,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-04")
},
{
review_id: 266,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-04")
},
{
review_id: 265,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-03")
},
{
review_id: 264,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-03")
},
{
review_id: 263,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-02")
},
{
review_id: 262,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-01")
},
{
review_id: 261,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-05-01")
},
{
review_id: 260,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-30")
},
{
review_id: 259,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-30")
},
{
review_id: 258,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-29")
},
{
review_id: 257,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-29")
},
{
review_id: 256,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-28")
},
{
review_id: 255,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-28")
},
{
review_id: 254,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-27")
},
{
review_id: 253,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-26")
},
{
review_id: 252,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-26")
},
{
review_id: 251,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-25")
},
{
review_id: 250,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-25")
},
{
review_id: 249,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-24")
},
{
review_id: 248,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-24")
},
{
review_id: 247,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-23")
},
{
review_id: 246,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-22")
},
{
review_id: 245,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-22")
},
{
review_id: 244,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-21")
},
{
review_id: 243,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-21")
},
{
review_id: 242,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-20")
},
{
review_id: 241,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-20")
},
{
review_id: 240,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-19")
},
{
review_id: 239,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-19")
},
{
review_id: 238,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-18")
},
{
review_id: 237,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-17")
},
{
review_id: 236,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-17")
},
{
review_id: 235,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-16")
},
{
review_id: 234,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-16")
},
{
review_id: 233,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-15")
},
{
review_id: 232,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-15")
},
{
review_id: 231,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-14")
},
{
review_id: 230,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-14")
},
{
review_id: 229,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-13")
},
{
review_id: 228,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-12")
},
{
review_id: 227,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-12")
},
{
review_id: 226,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-11")
},
{
review_id: 225,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-11")
},
{
review_id: 224,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-10")
},
{
review_id: 223,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-10")
},
{
review_id: 222,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-09")
},
{
review_id: 221,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-08")
},
{
review_id: 220,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-08")
},
{
review_id: 219,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-07")
},
{
review_id: 218,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-07")
},
{
review_id: 217,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-06")
},
{
review_id: 216,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-06")
},
{
review_id: 215,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-05")
},
{
review_id: 214,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-05")
},
{
review_id: 213,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-04")
},
{
review_id: 212,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-03")
},
{
review_id: 211,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-03")
},
{
review_id: 210,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-02")
},
{
review_id: 209,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-02")
},
{
review_id: 208,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-01")
},
{
review_id: 207,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-04-01")
},
{
review_id: 206,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-31")
},
{
review_id: 205,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-30")
},
{
review_id: 204,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-30")
},
{
review_id: 203,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-29")
},
{
review_id: 202,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-29")
},
{
review_id: 201,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-28")
},
{
review_id: 200,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-28")
},
{
review_id: 199,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-27")
},
{
review_id: 198,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-27")
},
{
review_id: 197,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-26")
},
{
review_id: 196,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-25")
},
{
review_id: 195,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-25")
},
{
review_id: 194,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-24")
},
{
review_id: 193,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-24")
},
{
review_id: 192,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-23")
},
{
review_id: 191,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-23")
},
{
review_id: 190,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-22")
},
{
review_id: 189,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-21")
},
{
review_id: 188,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-21")
},
{
review_id: 187,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-20")
},
{
review_id: 186,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-20")
},
{
review_id: 185,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-19")
},
{
review_id: 184,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-19")
},
{
review_id: 183,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-18")
},
{
review_id: 182,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-18")
},
{
review_id: 181,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-17")
},
{
review_id: 180,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-16")
},
{
review_id: 179,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-16")
},
{
review_id: 178,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-15")
},
{
review_id: 177,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-15")
},
{
review_id: 176,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-14")
},
{
review_id: 175,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-14")
},
{
review_id: 174,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-13")
},
{
review_id: 173,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-13")
},
{
review_id: 172,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-12")
},
{
review_id: 171,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-11")
},
{
review_id: 170,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-11")
},
{
review_id: 169,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-10")
},
{
review_id: 168,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-10")
},
{
review_id: 167,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-09")
},
{
review_id: 166,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-09")
},
{
review_id: 165,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-08")
},
{
review_id: 164,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-07")
},
{
review_id: 163,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-07")
},
{
review_id: 162,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-06")
},
{
review_id: 161,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-06")
},
{
review_id: 160,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-05")
},
{
review_id: 159,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-05")
},
{
review_id: 158,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-04")
},
{
review_id: 157,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-04")
},
{
review_id: 156,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-03")
},
{
review_id: 155,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-02")
},
{
review_id: 154,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-02")
},
{
review_id: 153,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-01")
},
{
review_id: 152,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-03-01")
},
{
review_id: 151,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-28")
},
{
review_id: 150,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-28")
},
{
review_id: 149,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-27")
},
{
review_id: 148,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-26")
},
{
review_id: 147,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-26")
},
{
review_id: 146,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-25")
},
{
review_id: 145,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-25")
},
{
review_id: 144,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-24")
},
{
review_id: 143,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-24")
},
{
review_id: 142,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-23")
},
{
review_id: 141,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-23")
},
{
review_id: 140,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-22")
},
{
review_id: 139,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-21")
},
{
review_id: 138,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-21")
},
{
review_id: 137,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-20")
},
{
review_id: 136,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-20")
},
{
review_id: 135,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-19")
},
{
review_id: 134,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-19")
},
{
review_id: 133,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-18")
},
{
review_id: 132,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-17")
},
{
review_id: 131,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-17")
},
{
review_id: 130,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-16")
},
{
review_id: 129,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-16")
},
{
review_id: 128,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-15")
},
{
review_id: 127,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-15")
},
{
review_id: 126,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-14")
},
{
review_id: 125,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-14")
},
{
review_id: 124,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-13")
},
{
review_id: 123,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-12")
},
{
review_id: 122,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-12")
},
{
review_id: 121,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-11")
},
{
review_id: 120,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-11")
},
{
review_id: 119,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-10")
},
{
review_id: 118,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-10")
},
{
review_id: 117,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-09")
},
{
review_id: 116,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-09")
},
{
review_id: 115,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-08")
},
{
review_id: 114,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-07")
},
{
review_id: 113,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-07")
},
{
review_id: 112,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-06")
},
{
review_id: 111,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-06")
},
{
review_id: 110,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-05")
},
{
review_id: 109,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-05")
},
{
review_id: 108,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-04")
},
{
review_id: 107,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-03")
},
{
review_id: 106,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-03")
},
{
review_id: 105,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-02")
},
{
review_id: 104,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-02")
},
{
review_id: 103,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-01")
},
{
review_id: 102,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-02-01")
},
{
review_id: 101,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-31")
},
{
review_id: 100,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-31")
},
{
review_id: 99,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-30")
},
{
review_id: 98,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-29")
},
{
review_id: 97,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-29")
},
{
review_id: 96,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-28")
},
{
review_id: 95,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-28")
},
{
review_id: 94,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-27")
},
{
review_id: 93,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-27")
},
{
review_id: 92,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-26")
},
{
review_id: 91,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-25")
},
{
review_id: 90,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-25")
},
{
review_id: 89,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-24")
},
{
review_id: 88,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-24")
},
{
review_id: 87,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-23")
},
{
review_id: 86,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-23")
},
{
review_id: 85,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-22")
},
{
review_id: 84,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-22")
},
{
review_id: 83,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-21")
},
{
review_id: 82,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-20")
},
{
review_id: 81,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-20")
},
{
review_id: 80,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-19")
},
{
review_id: 79,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-19")
},
{
review_id: 78,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-18")
},
{
review_id: 77,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-18")
},
{
review_id: 76,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-17")
},
{
review_id: 75,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-16")
},
{
review_id: 74,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-16")
},
{
review_id: 73,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-15")
},
{
review_id: 72,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-15")
},
{
review_id: 71,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-14")
},
{
review_id: 70,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-14")
},
{
review_id: 69,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-13")
},
{
review_id: 68,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-13")
},
{
review_id: 67,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-12")
},
{
review_id: 66,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-11")
},
{
review_id: 65,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-11")
},
{
review_id: 64,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-10")
},
{
review_id: 63,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-10")
},
{
review_id: 62,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-09")
},
{
review_id: 61,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-09")
},
{
review_id: 60,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-08")
},
{
review_id: 59,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-08")
},
{
review_id: 58,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-07")
},
{
review_id: 57,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-06")
},
{
review_id: 56,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-06")
},
{
review_id: 55,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-05")
},
{
review_id: 54,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-05")
},
{
review_id: 53,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-04")
},
{
review_id: 52,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-04")
},
{
review_id: 51,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-03")
},
{
review_id: 50,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-02")
},
{
review_id: 49,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-02")
},
{
review_id: 48,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-01")
},
{
review_id: 47,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2018-01-01")
},
{
review_id: 46,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-31")
},
{
review_id: 45,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-31")
},
{
review_id: 44,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-30")
},
{
review_id: 43,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-30")
},
{
review_id: 42,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-29")
},
{
review_id: 41,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-28")
},
{
review_id: 40,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-28")
},
{
review_id: 39,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-27")
},
{
review_id: 38,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-27")
},
{
review_id: 37,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-26")
},
{
review_id: 36,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-26")
},
{
review_id: 35,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-25")
},
{
review_id: 34,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-24")
},
{
review_id: 33,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-24")
},
{
review_id: 32,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-23")
},
{
review_id: 31,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-23")
},
{
review_id: 30,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-22")
},
{
review_id: 29,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-22")
},
{
review_id: 28,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-21")
},
{
review_id: 27,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-21")
},
{
review_id: 26,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-20")
},
{
review_id: 25,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-19")
},
{
review_id: 24,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-19")
},
{
review_id: 23,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-18")
},
{
review_id: 22,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-18")
},
{
review_id: 21,
review_author: "Trina",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-17")
},
{
review_id: 20,
review_author: "Kristina",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-17")
},
{
review_id: 19,
review_author: "Priya",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-16")
},
{
review_id: 18,
review_author: "Olu",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-15")
},
{
review_id: 17,
review_author: "Nils",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-15")
},
{
review_id: 16,
review_author: "Mina",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-14")
},
{
review_id: 15,
review_author: "Luca",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-14")
},
{
review_id: 14,
review_author: "Keiko",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-13")
},
{
review_id: 13,
review_author: "Jonas",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-13")
},
{
review_id: 12,
review_author: "Ines",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-12")
},
{
review_id: 11,
review_author: "Hoa",
review_text: "Sturdy and well made.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-12")
},
{
review_id: 10,
review_author: "Goran",
review_text: "Works as described.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-11")
},
{
review_id: 9,
review_author: "Farah",
review_text: "Solid widget.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-10")
},
{
review_id: 8,
review_author: "Emeka",
review_text: "My toolbox favourite.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-10")
},
{
review_id: 7,
review_author: "Dagny",
review_text: "Not bad.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-09")
},
{
review_id: 6,
review_author: "Chen",
review_text: "Better than expected.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-09")
},
{
review_id: 5,
review_author: "Bilal",
review_text: "Arrived late, works fine.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-08")
},
{
review_id: 4,
review_author: "Amara",
review_text: "Would buy again.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-08")
},
{
review_id: 3,
review_author: "Hans",
review_text: "Does the job.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-07")
},
{
review_id: 2,
review_author: "Pablo",
review_text: "Good value for the price.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-07")
},
{
review_id: 1,
review_author: "Hans",
review_text: "Meh, it's ok.",
product_id: ObjectId("507f1f77bcf86cd993384520"),
published_date: ISODate("2017-12-06")
}
] )

// The same policy adopts the hand-made split: the archive already holds every review, the
// product keeps the 10 newest (776 leaves the embedded array).
db.products.setPattern({ subset: "reviews", keep: 10, sortBy: { published_date: -1 }, archiveCollection: "review", linkField: "product_id", identity: "review_id" })
db.verifyPatterns()
db['system.stored.products'].findOne({}, { name: 1, "reviews.review_id": 1, "reviews.published_date": 1 })
db.products.arrayLength(ObjectId("507f1f77bcf86cd993384520"), "reviews")
db.products.arrayPage(ObjectId("507f1f77bcf86cd993384520"), "reviews", { skip: 9, limit: 2 })
db.products.arrayPage(ObjectId("507f1f77bcf86cd993384520"), "reviews", { skip: 785 })
db.review.countDocuments({ product_id: ObjectId("507f1f77bcf86cd993384520") })
db.products.find({ "reviews.review_author": "Hans" }, { name: 1 })

// A new review: it goes into the archive and, being the newest, into the product, whose
// oldest embedded review (777) leaves it.
db.products.updateOne({ _id: ObjectId("507f1f77bcf86cd993384520") }, { $push: { reviews: { review_id: 787, review_author: "Ada", review_text: "Still the best widget.", published_date: ISODate("2019-02-19") } } })
db['system.stored.products'].findOne({}, { "reviews.review_id": 1 })
db.products.arrayLength(ObjectId("507f1f77bcf86cd993384520"), "reviews")
db.review.countDocuments()
db.verifyPatterns()
