"""Published numbers of RULE (Kawabata & Sugawara, EMNLP 2023)."""

from . import Citation, Published

CITATION = Citation(
    key="kawabata2023rule",
    title="Evaluating the Rationale Understanding of Critical Reasoning in Logical Reading Comprehension",
    authors="Akira Kawabata and Saku Sugawara",
    venue="Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year=2023,
    url="https://aclanthology.org/2023.emnlp-main.8",
)

NUMBERS: list[Published] = []
