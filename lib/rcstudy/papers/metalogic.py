"""Published numbers of MetaLogic (Huang et al., Findings of EMNLP 2022)."""

from . import Citation, Published

CITATION = Citation(
    key="huang2022metalogic",
    title="MetaLogic: Logical Reasoning Explanations with Fine-Grained Structure",
    authors="Yinya Huang and Hongming Zhang and Ruixin Hong and Xiaodan Liang and Changshui Zhang and Dong Yu",
    venue="Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year=2022,
    url="https://aclanthology.org/2022.emnlp-main.310",
)

NUMBERS: list[Published] = []
