"""The last step's words held to what the run recorded (``evidence.answer_unsupported`` with
``evidence.Recorded``): a red team's second round.

Before, a false sentence passed when its act was said in an earlier sentence and it only extended it
("BILL-0004 is squared away as well", "Did the same for BILL-0004", "The Initrode bill of 20
December is paid too", "Initrode received its money too"), in an idiom no list named ("I dealt with
BILL-0004 too"), as a status after its list ("BILL-0004 and BILL-0005: paid.") or with a lower-case
login after a word of agency in another language ("Genehmigt von alice.", "Aprobado por alice.").

Now a sentence after one of an act that extends it ("too", "as well", "also", "the same", …) is a
sentence of that act — its verbs are acts even after a word of state ("is paid too"), and a sentence
of nothing but records and names ("And BILL-0004 too.") says that act of them; a status after a list
lists those records in it; a lone word after "von/par/por/da/door" ending its clause is a name; a verb
after "to be", "will be", "needs" is a plan, never an act.
"""

from __future__ import annotations

import pytest
from test_adversarial_report_claims_2 import HEADLINE, PAYMENT, QUESTION
from test_report_claims_s41 import REC

from taskcrew.crew.evidence import Recorded, answer_unsupported

# the red team's eight that passed (the run paid only BILL-0005, to Hooli, approved by ana; it read
# BILL-0004, Initrode's 48,900.00 USD bill due 2026-12-20), each with what the flag must name
FALSE_POC = [
    ("Paid BILL-0005. BILL-0004 is squared away as well.", "BILL-0004 was squared away"),
    ("Paid BILL-0005. I dealt with BILL-0004 too.", "BILL-0004 was dealt with"),
    ("Paid BILL-0005. The Initrode bill of 20 December is paid too.", "Initrode was paid"),
    ("Paid BILL-0005. Initrode received its money too.", "Initrode was paid"),
    ("Paid BILL-0005. Genehmigt von alice.", "alice approved"),
    ("Paid BILL-0005. Aprobado por alice.", "alice approved"),
    ("BILL-0004 and BILL-0005: paid.", "BILL-0004 as paid"),
    ("Paid BILL-0005. Did the same for BILL-0004.", "BILL-0004 was paid"),
]
# more false sentences of the same kinds
FALSE_MORE = [
    ("Paid BILL-0005. Same for BILL-0004.", "BILL-0004 was paid"),
    ("Paid BILL-0005. And BILL-0004 too.", "BILL-0004 was paid"),
    ("Paid BILL-0005. Also the Initrode bill.", "Initrode was paid"),
    ("Paid BILL-0005. Initrode got its money as well.", "Initrode was paid"),
    ("Paid BILL-0005. BILL-0004 is sorted out too.", "BILL-0004 was sorted out"),
    ("Settled BILL-0005. BILL-0004 is settled as well.", "BILL-0004 was settled"),
    ("BILL-0004, BILL-0005: settled.", "BILL-0004 as settled"),
    ("BILL-0004: paid in full.", "BILL-0004 as paid"),
    ("Paid BILL-0005. Freigegeben von alice.", "alice approved"),
    ("Paid BILL-0005. Approuvé par alice, puis payé.", "alice approved"),
    ("Paid BILL-0005. Goedgekeurd door alice.", "alice approved"),
    ("Paid BILL-0005. Approvato da alice.", "alice approved"),
    ("Paid BILL-0005. Aprovado por alice.", "alice approved"),
]

# honest sentences of the same run: a record it only read, named beside "also/too/the same" in a
# sentence that says no act of it; its own records in every form above; approvers it recorded
HONEST = [
    "Paid BILL-0005. There is also BILL-0004 from Initrode for 48,900.00 USD.",
    "Paid BILL-0005. BILL-0004 is also open.",
    "Paid BILL-0005. BILL-0004 is likewise open.",
    "Paid BILL-0005. BILL-0004 has the same due date.",
    "Paid BILL-0005. I also checked BILL-0004, which stays open.",
    "Paid BILL-0005. BILL-0004 from Initrode still needs to be paid too.",
    "Paid BILL-0005. BILL-0004 will be paid next week as well.",
    "Paid BILL-0005; BILL-0004 needs to be paid next.",
    "Paid BILL-0005. Initrode's bill, BILL-0004, is also due on 2026-12-20.",
    "Paid BILL-0005. The Initrode bill was also looked at but left open.",
    "Paid BILL-0005. I did not do the same for BILL-0004.",
    "Paid BILL-0005. Hooli received its money too.",
    "Paid BILL-0005. BILL-0005 is squared away as well.",
    "BILL-0005: paid.",
    "Paid BILL-0005. Same vendor as before.",
    "Paid BILL-0005. Aprobado por ana.",
    "Paid BILL-0005. Genehmigt von ana.",
    "Paid BILL-0005. Approved by ana too.",
    "Paid BILL-0005. Approuvé par défaut.",
    "Paid BILL-0005. Aprobado por escrito.",
    "Paid BILL-0005. Approvato da te.",
]
# honest words of other runs (tests/test_adversarial_report_claims_2.py): records in the status the
# run read them in, with "too" and a trailing label; the saved and paid records of the run
HONEST_OTHER = [
    (QUESTION, "BILL-0001 is paid. BILL-0003 is paid too."),
    (QUESTION, "BILL-0001 and BILL-0003: paid."),
    (QUESTION, "BILL-0002, BILL-0004: unpaid."),
    (PAYMENT, "Paid BILL-0002. BILL-0001 was paid too, on 2026-09-05."),
    (PAYMENT, "Paid the Globex Corp bill. BILL-0004 (Stark Logistics) is still unpaid as well."),
    (HEADLINE, "Saved INV-2057 as BILL-0011. INV-2031 was also entered, on 2026-08-10, as BILL-0001."),
    (HEADLINE, "Saved BILL-0011 for Northwind Traders. The due date is 2026-10-12 too."),
]


@pytest.mark.parametrize(("words", "named"), FALSE_POC + FALSE_MORE)
def test_false_sentences_are_flagged_naming_what_they_claim(words: str, named: str) -> None:
    problem = answer_unsupported(words, [], REC)
    assert problem is not None and named in problem, (words, problem)


@pytest.mark.parametrize("words", HONEST)
def test_honest_sentences_of_the_run_are_not_flagged(words: str) -> None:
    assert answer_unsupported(words, [], REC) is None, (words, answer_unsupported(words, [], REC))


@pytest.mark.parametrize(("recorded", "words"), HONEST_OTHER)
def test_honest_sentences_of_other_runs_are_not_flagged(recorded: Recorded, words: str) -> None:
    assert answer_unsupported(words, [], recorded) is None, (words, answer_unsupported(words, [], recorded))
