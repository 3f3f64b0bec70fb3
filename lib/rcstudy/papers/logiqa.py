"""Published numbers of LogiQA (Liu et al., IJCAI 2020)."""

from . import Citation, Published

CITATION = Citation(
    key="liu2020logiqa",
    title="LogiQA: A Challenge Dataset for Machine Reading Comprehension with Logical Reasoning",
    authors="Jian Liu and Leyang Cui and Hanmeng Liu and Dandan Huang and Yile Wang and Yue Zhang",
    venue="Proceedings of the Twenty-Ninth International Joint Conference on Artificial Intelligence (IJCAI)",
    year=2020,
    url="https://www.ijcai.org/proceedings/2020/501",
)

NUMBERS: list[Published] = []
