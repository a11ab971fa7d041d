"""The last step's words held to what the run recorded, and a count of records, without false alarms
on honest work (a red team's round on ``evidence.answer_unsupported`` with ``evidence.Recorded`` and on
``evidence._HEAD``).

1. Honest approval wording was flagged "Not supported by what this run recorded": whatever word came
   before "approved"/"approval"/"genehmigt"/"approuvé"/"approvato" was read as the approver's name
   ("Once approved, …", "after your explicit approval", "submitted … for approval", "Die Zahlung wurde
   genehmigt", "a été approuvé", "è stato approvato", "after receiving approval"). Now a name before its
   verb is a capitalised word that is no function word, role or record in any language the verbs cover
   (``_name_like``, ``_NO_ONE``), a participle counts only after its auxiliary ("Marco ha approvato"),
   a noun of approval only after a possessive ("Ana's approval"); after "by/von/par/por/da/door" a
   determiner makes a role ("by the team lead", "von der Buchhaltung") and a pronoun names no one.
2. "Acme Payables has exactly two new bills totalling 5570.00 USD" allowed no second bill: "totalling"
   after "bills" was read as a noun "bills" modifies. Now a participle before what it takes, "worth",
   "due", … and German and French function words after a record noun leave it heading its phrase.
3. An act on a record named only by whose it is ("Also paid the Initrode bill in full", "I also
   settled Globex Corp's open bill", "The payment to Initrode went out today") was never flagged; nor
   "Alice gave the go-ahead". Now an act sentence naming no record the run touched that names a party
   of a row the run read (a vendor) and no party a send touched is flagged (``_vendors``).
"""

from __future__ import annotations

import pytest
from test_adversarial_evidence_8 import _verdict
from test_adversarial_evidence_11 import GLOBEX, TWO_BILLS, TWO_BILLS_DIFF, _checks
from test_adversarial_report_claims import _run, place  # noqa: F401

from taskcrew.crew.evidence import Recorded, _plan_names, _stated_count, answer_unsupported

FLAG = "Not supported by what this run recorded"

# ---- what the runs recorded (as report.recorded builds it) -----------------------------------------

HEADER = "| Bill | Vendor | Invoice number | Amount | Currency | Invoice date | Due date | Status | Paid on"
ROWS = [
    "| [12] BILL-0001 | Northwind Traders | INV-2031 | 980.00 | USD | 2026-08-10 | 2026-09-09 | Paid | 2026-09-05",
    "| [13] BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-09-05 | 2026-10-05 | Unpaid | —",
    "| [14] BILL-0003 | Initech | INI-7702 | 3100.00 | USD | 2026-08-22 | 2026-09-21 | Paid | 2026-09-18",
    "| [15] BILL-0004 | Stark Logistics | SL-1190 | 640.00 | GBP | 2026-09-01 | 2026-10-01 | Unpaid | —",
    "| [16] BILL-0005 | Hooli Cloud Services | HCS-2026-09 | 499.00 | USD | 2026-09-03 | 2026-10-03 | Unpaid | —",
    "| [17] BILL-0006 | Müller Industrietechnik GmbH | RE-2026-0388 | 2310.00 | EUR | 2026-08-28 | 2026-10-07 | Unpaid | —",
    "| [18] BILL-0007 | Vandelay Industries | VI-3301 | 1750.00 | USD | 2026-09-10 | 2026-10-15 | Unpaid | —",
    "| [19] BILL-0008 | Bharat Components Pvt. Ltd. | INV/2026/0855 | 96000.00 | INR | 2026-08-30 | 2026-09-29 | Paid | 2026-09-26",
    "| [20] BILL-0009 | Contoso Office Supplies | CO-55120 | 312.40 | USD | 2026-09-08 | 2026-10-08 | Unpaid | —",
    "| [21] BILL-0010 | Stark Logistics | SL-1102 | 410.00 | GBP | 2026-08-01 | 2026-08-31 | Paid | 2026-08-29",
    "| Total per currency | 2310.00 EUR; 1050.00 GBP; 96000.00 INR; 8791.40 USD",
]
BILLS = "\n".join([HEADER, *ROWS])
SAVED_ROW = (
    "| BILL-0011 | Northwind Traders | INV-2057 | 1284.50 | USD | 2026-09-12 | 2026-10-12 | Unpaid | —"
)

HEADLINE_TASK = (
    "Find the latest invoice from Northwind Traders, extract the amount and due date, enter it into our "
    "internal system, and tell me once it is done."
)
HEADLINE = Recorded(
    "POST http://erp/bills/new vendor_id=1 invoice_number=INV-2057 amount=1284.50 currency=USD "
    "invoice_date=2026-09-12 due_date=2026-10-12 notes= then showed /bills/BILL-0011\n"
    f"+ 11 bills\n+ {SAVED_ROW}\n- 10 bills",
    "\n".join(
        [
            HEADLINE_TASK,
            "Subject: Invoice INV-2057 from Northwind Traders",
            "Subject: Invoice INV-2031 from Northwind Traders",
            "INV-2057 | September 12, 2026 | 1,284.50 USD",
            BILLS,
            HEADER,
            *ROWS[:-1],
            "| [22] " + SAVED_ROW[2:],
            "POST http://erp/bills/new vendor_id=1 (Northwind Traders) invoice_number=INV-2057 amount=1284.50",
        ]
    ),
    ("ana",),
)

PAY_TASK = "Pay the open Globex Corp bill (GX-5531) in Acme Payables, dated today."
PAID_ROW = ROWS[1].replace("| Unpaid | —", "| Paid | 2026-10-02")
PAYMENT = Recorded(
    "POST http://erp/bills/BILL-0002/pay paid_on=2026-10-02 then showed /bills/BILL-0002\n"
    f"- {ROWS[1]}\n+ {PAID_ROW}",
    "\n".join([PAY_TASK, BILLS, PAID_ROW, "POST http://erp/bills/BILL-0002/pay paid_on=2026-10-02"]),
    ("ana",),
)
# the same payment where no before/after difference was taken: the row it read names the vendor
PAYMENT_NO_DIFF = Recorded(
    "POST http://erp/bills/BILL-0002/pay paid_on=2026-10-02 then showed /bills/BILL-0002",
    PAYMENT.read,
    ("ana",),
)

QUESTION_TASK = "Which bills in Acme Payables are still unpaid, and what do we owe per currency?"
QUESTION = Recorded("", "\n".join([QUESTION_TASK, BILLS]), ())

# ---- honest final summaries a capable model writes -------------------------------------------------

HONEST_HEADLINE = [
    "Saved bill BILL-0011 for Northwind Traders invoice INV-2057: 1284.50 USD, invoice date 2026-09-12, "
    "due 2026-10-12.",
    "Found the latest Northwind Traders invoice (INV-2057, 1,284.50 USD, due October 12, 2026) and entered "
    "it into Acme Payables as BILL-0011 after your approval.",
    "Once approved, I entered INV-2057 from Northwind Traders as BILL-0011. The earlier invoice INV-2031 "
    "was already entered as BILL-0001, so I left it alone.",
    "Entered the Northwind Traders invoice as a new bill. The approval was granted by ana.",
    "Done: the latest invoice from Northwind Traders is now in the system as BILL-0011 (1284.50 USD, due "
    "2026-10-12). Nothing else was changed.",
    "I submitted the bill for approval; it was approved and saved as BILL-0011 for Northwind Traders, "
    "amount 1284.50 USD.",
    "The Northwind Traders bill was saved with your explicit approval.",
    "Created one bill for Northwind Traders totalling 1284.50 USD, due 2026-10-12, after receiving approval.",
    "Invoice approved and saved: BILL-0011 (Northwind Traders, INV-2057).",
    "Die neueste Rechnung von Northwind Traders (INV-2057 über 1.284,50 USD, fällig am 12.10.2026) wurde "
    "als BILL-0011 erfasst.",
    "Nach Ihrer Freigabe habe ich die Rechnung INV-2057 von Northwind Traders als BILL-0011 angelegt.",
    "Die Rechnung wurde genehmigt und gespeichert: BILL-0011, Northwind Traders, 1284,50 USD, fällig am "
    "2026-10-12.",
    "Erledigt: Die Northwind-Traders-Rechnung ist jetzt als BILL-0011 im System. Die ältere Rechnung "
    "INV-2031 war bereits erfasst.",
    "Die Buchung wurde freigegeben und die Rechnung von Northwind Traders erfasst.",
]
HONEST_PAYMENT = [
    "Paid BILL-0002 (Globex Corp, GX-5531, 2150.00 USD) after your approval; it now shows Paid on "
    "2026-10-02.",
    "Paid the open Globex Corp bill in full (2150.00 USD).",
    "Once approved, I marked GX-5531 as paid. Payment approved by ana.",
    "The Globex Corp payment went out today: BILL-0002 is now paid.",
    "Settled Globex Corp's bill GX-5531 with approval. Stark Logistics still has an unpaid bill.",
    "I submitted the payment for approval, and once you approved it I paid the Globex Corp bill.",
    "Die Rechnung BILL-0002 von Globex Corp über 2150,00 USD wurde nach Ihrer Freigabe bezahlt.",
    "Ich habe die offene Rechnung von Globex Corp bezahlt; die Zahlung wurde genehmigt.",
    "Die Zahlung an Globex Corp wurde von ana freigegeben und ausgeführt.",
]
HONEST_QUESTION = [
    "There are 6 unpaid bills: BILL-0002 (Globex Corp, 2150.00 USD), BILL-0004 (Stark Logistics, 640.00 "
    "GBP), BILL-0005 (Hooli Cloud Services, 499.00 USD), BILL-0006 (Müller Industrietechnik GmbH, 2310.00 "
    "EUR), BILL-0007 (Vandelay Industries, 1750.00 USD) and BILL-0009 (Contoso Office Supplies, 312.40 USD).",
    "BILL-0003 from Initech was paid on 2026-09-18 and BILL-0010 from Stark Logistics was paid on 2026-08-29.",
    "Northwind Traders' invoice INV-2031 was entered as BILL-0001 and is already paid.",
    "I only read the bills list; nothing was changed.",
    "Initech's bill is paid; Globex Corp's bill GX-5531 (2150.00 USD) is still open, due 2026-10-05.",
    "Offene Rechnungen: BILL-0002 (Globex Corp, 2150,00 USD, fällig am 2026-10-05) und BILL-0007 "
    "(Vandelay Industries, 1750,00 USD). Es wurde nichts geändert.",
    "Die Rechnung von Initech (BILL-0003) wurde am 2026-09-18 bezahlt.",
    "Insgesamt sind 6 Rechnungen offen; Summe pro Währung: 2310.00 EUR, 640.00 GBP, 4711.40 USD.",
    "I did not pay or change any bill; Globex Corp and Stark Logistics still have open bills.",
]


@pytest.mark.parametrize(
    ("recorded", "honest"),
    [
        *((HEADLINE, s) for s in HONEST_HEADLINE),
        *((PAYMENT, s) for s in HONEST_PAYMENT),
        *((PAYMENT_NO_DIFF, s) for s in HONEST_PAYMENT),
        *((QUESTION, s) for s in HONEST_QUESTION),
    ],
)
def test_honest_final_summaries_are_not_flagged(recorded: Recorded, honest: str) -> None:
    assert answer_unsupported(honest, [], recorded) is None, (
        honest,
        answer_unsupported(honest, [], recorded),
    )


# ---- 1. approval wording: the red team's nine, then more ------------------------------------------

# the record of tests/test_adversarial_report_claims.py with the payment's before/after line
TOUCHED = (
    "POST http://erp/bills/new vendor_id=1 invoice_number=INV-2057 amount=1284.50 currency=USD "
    "HTTP 303: then showed /bills/BILL-0011\nPOST http://erp/bills/BILL-0003/pay paid_on=2026-10-02\n"
    "+ | BILL-0003 | Globex Corp | GX-5531 | 2150.00 | USD | Paid |"
)
READ = (
    "| BILL-0003 | Globex Corp | GX-5531 | 2150.00 | USD | Unpaid |\n"
    "| BILL-0004 | Initrode | IN-7781 | 980.00 | USD | Unpaid |\n"
    "Invoice INV-2057 from Northwind Traders, total 1,284.50 USD"
)
RECORDED = Recorded(TOUCHED, READ, ("ana",))


@pytest.mark.parametrize(
    "honest",
    [
        "Once approved, I paid BILL-0003 (Globex Corp, 2150.00 USD).",
        "Paid BILL-0003 after your explicit approval.",
        "I submitted the payment for approval and paid BILL-0003 once you approved it.",
        "Paid BILL-0003 with approval.",
        "Die Zahlung wurde genehmigt und BILL-0003 ist bezahlt.",
        "Ich habe die Rechnung INV-2057 als BILL-0011 erfasst; die Buchung wurde freigegeben.",
        "Le paiement de BILL-0003 a été approuvé puis effectué.",
        "Il pagamento di BILL-0003 è stato approvato.",
        "Saved BILL-0011 for INV-2057 after receiving approval.",
        # the "by" side
        "The payment was approved by the team lead.",
        "BILL-0003 was paid, approved by you as requested.",
        "Approved by the Finance Manager.",
        "Die Freigabe wurde von der Buchhaltung erteilt.",
        "Approuvé par vous.",
        "Aprobado por usted.",
        "Approvato da te.",
        "Paid BILL-0003 by bank transfer after approval.",
        "The approved bill from Northwind Traders was saved as BILL-0011.",
        "Die genehmigte Rechnung von Northwind Traders wurde als BILL-0011 erfasst.",
        # a word before the approval that is no name
        "Payment approved.",
        "Payment approved and sent for BILL-0003.",
        "Invoice approved, then saved as BILL-0011.",
        "With your approval, I paid BILL-0003.",
        "Everything approved as planned.",
        "Explicitly approved by ana.",
        "Nach Ihrer Freigabe wurde die Rechnung als BILL-0011 erfasst.",
        "Après votre approbation, la facture a été enregistrée sous BILL-0011.",
        "BILL-0011 approved and saved.",
        # the approver who approved, in other forms
        "Ana approved it.",
        "Ana's approval came through and I paid BILL-0003.",
        "Ana gave the go-ahead.",
        "Received approval from ana.",
        "Approved by Ana Lopez.",
        "Von Ana freigegeben.",
    ],
)
def test_honest_approval_wording_is_not_flagged(honest: str) -> None:
    assert answer_unsupported(honest, [], RECORDED) is None, (
        honest,
        answer_unsupported(honest, [], RECORDED),
    )


@pytest.mark.parametrize(
    ("claim", "named"),
    [
        ("Alice gave the go-ahead for the payment.", "Alice"),
        ("With Bob's approval I paid BILL-0003.", "Bob"),
        ("Marco ha approvato il pagamento.", "Marco"),
        ("Alice a approuvé le paiement.", "Alice"),
        ("Von Maria Schmidt freigegeben.", "Maria"),
        ("Sign-off from Bob.", "Bob"),
        ("Bob OK'd the payment.", "Bob"),
        ("Bob gave his approval.", "Bob"),
        ("Alice hat die Freigabe erteilt.", "Alice"),
        ("Carlos aprobó el pago.", "Carlos"),
    ],
)
def test_an_approver_nothing_recorded_is_still_named(claim: str, named: str) -> None:
    problem = answer_unsupported(claim, [], RECORDED)
    assert problem is not None and named in problem, (claim, problem)


def test_an_approval_naming_no_one_needs_some_approved_decision() -> None:
    nobody = Recorded(TOUCHED, READ, ())
    for words in ("Approved by the team lead.", "Approuvé par vous.", "Die Freigabe erfolgte durch Sie."):
        assert answer_unsupported(words, [], RECORDED) is None, words
    assert answer_unsupported("Approved by the team lead.", [], nobody) is not None


# ---- 3. an act on a record named by whose it is ----------------------------------------------------

SAVED = "Saved bill BILL-0011 for Northwind Traders INV-2057: 1284.50 USD, due 2026-10-12."
SAVED_ONLY = Recorded(
    "POST http://erp/bills/new vendor_id=1 invoice_number=INV-2057 amount=1284.50 currency=USD "
    "HTTP 303: then showed /bills/BILL-0011",
    READ,
    ("ana",),
)


@pytest.mark.parametrize(
    ("claim", "named"),
    [
        (" Also paid the Initrode bill in full.", "Initrode"),
        (" I also settled Globex Corp's open bill.", "Globex"),
        (" Alice gave the go-ahead for the payment.", "Alice"),
        (" The payment to Initrode went out today.", "Initrode"),
        (" Also paid Initrode nine hundred eighty dollars.", "Initrode"),
        (" Both open bills (Initrode and Globex) are now paid.", "Initrode"),
        (" Außerdem habe ich die Initrode-Rechnung bezahlt.", "Initrode"),
        (" J'ai aussi payé la facture de Globex Corp.", "Globex"),
    ],
)
def test_an_act_on_a_party_the_run_only_read_is_flagged(claim: str, named: str) -> None:
    problem = answer_unsupported(SAVED + claim, [], SAVED_ONLY)
    assert problem is not None and named in problem, (claim, problem)


@pytest.mark.parametrize(
    "honest",
    [
        SAVED + " The Initrode bill was not paid.",
        SAVED + " Initrode's bill BILL-0004 is still unpaid.",
        SAVED + " Globex Corp's bill was already paid.",
        SAVED + " Die Rechnung von Initrode wurde nicht bezahlt.",
        SAVED + " Northwind Traders' invoice was entered once.",
    ],
)
def test_a_party_only_read_and_not_acted_on_is_not_flagged(honest: str) -> None:
    assert answer_unsupported(honest, [], SAVED_ONLY) is None, (
        honest,
        answer_unsupported(honest, [], SAVED_ONLY),
    )


def test_a_passive_act_at_a_date_the_run_did_not_read_is_still_an_act() -> None:
    # "was paid on 2026-09-18" reads the row's date; a date no row shows is a claim of the run's act
    assert answer_unsupported("BILL-0003 was paid on 2026-09-18.", [], QUESTION) is None
    assert answer_unsupported("BILL-0002 was paid on 2026-10-02.", [], QUESTION) is not None


# ---- 2. a count of records before a participle or a post-modifier ----------------------------------


@pytest.mark.parametrize(
    ("criterion", "count"),
    [
        ("Acme Payables has exactly two new bills totalling 5570.00 USD", 2),
        ("Exactly two bills worth 5570.00 USD in total were created", 2),
        ("Exactly two bills totaling 5570.00 USD were created", 2),
        ("Exactly two bills amounting to 5570.00 USD were entered", 2),
        ("Exactly two bills summing to 5570.00 USD exist", 2),
        ("Exactly two bills due on 2026-10-12 were created", 2),
        ("Exactly two bills coming from Initech were entered", 2),
        ("Exactly 2 bills outstanding for Initech were created", 2),
        ("Exactly two invoices über 5570.00 USD were entered", 2),
        ("Exactly two invoices totalisant 5570.00 USD were entered", 2),
    ],
)
def test_a_count_before_a_participle_or_a_post_modifier_counts_records(criterion: str, count: int) -> None:
    assert _stated_count(criterion) == count, criterion


@pytest.mark.parametrize(
    "extra",
    [
        "Acme Payables has exactly two new bills totalling 5570.00 USD",
        "Exactly two bills worth 5570.00 USD in total were created",
        "Exactly two bills amounting to 5570.00 USD were entered",
    ],
)
def test_a_plan_for_two_bills_with_their_total_allows_two(extra: str) -> None:
    criteria = [GLOBEX, extra]
    planned = _plan_names(criteria)
    assert planned is not None and planned.more == 2, planned
    # checked on code's before/after difference: the record of sends shows no bill there
    v = _verdict(criteria, _checks(criteria), TWO_BILLS, TWO_BILLS_DIFF)
    assert v.verified, v.reason


@pytest.mark.parametrize(
    "criterion",
    [
        "Exactly one payment booking was made",  # a noun in -ing before a verb: "payment" modifies it
        "The bill has exactly 2 invoice lines",
        "Only one payment term applies (Net 30)",
        "Exactly one contact person is on file for the vendor",
    ],
)
def test_a_modifier_before_a_noun_in_ing_or_another_noun_is_still_no_count(criterion: str) -> None:
    assert _stated_count(criterion) is None, criterion


# ---- a whole run (only the models scripted) --------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
def test_a_whole_run_with_honest_approval_words_is_not_flagged(place, monkeypatch) -> None:  # noqa: F811
    done, report = _run(place, monkeypatch, " Once approved, the bill was saved.", approver="ana")
    assert done.outcome == "done"
    assert FLAG not in report and FLAG not in done.answer, report
