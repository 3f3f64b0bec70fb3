"""Published numbers of ReClor (Yu et al., ICLR 2020)."""

from . import Citation, Published

CITATION = Citation(
    key="yu2020reclor",
    title="ReClor: A Reading Comprehension Dataset Requiring Logical Reasoning",
    authors="Weihao Yu and Zihang Jiang and Yanfei Dong and Jiashi Feng",
    venue="International Conference on Learning Representations (ICLR)",
    year=2020,
    url="https://openreview.net/forum?id=HJgJtT4tvB",
)

NUMBERS: list[Published] = []
