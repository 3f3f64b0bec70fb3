"""Published numbers of ReCoRD (Zhang et al., 2018)."""

from . import Citation, Published

CITATION = Citation(
    key="zhang2018record",
    title="ReCoRD: Bridging the Gap between Human and Machine Commonsense Reading Comprehension",
    authors="Sheng Zhang and Xiaodong Liu and Jingjing Liu and Jianfeng Gao and Kevin Duh and Benjamin Van Durme",
    venue="arXiv preprint arXiv:1810.12885",
    year=2018,
    url="https://arxiv.org/abs/1810.12885",
)

NUMBERS: list[Published] = []
