"""ReClor's input formats: the text each Table 6/7 family reads for one option.

The pretrained encoders and the Bi-LSTM read the multiple-choice engine's standard pairs
(:func:`rcstudy.models.mc.option_pairs`), by input setting::

    "A"    [CLS] option [SEP]
    "QA"   [CLS] question option [SEP]
    "CQA"  [CLS] context [SEP] question option [SEP]

(the Bi-LSTM reads the same segments as words, without the special tokens). fastText reads one
line per option, built here.
"""

from __future__ import annotations

from ..data.records import MCItem
from ..models.mc import option_pairs


def fasttext_line(item: MCItem, j: int, fields: str) -> str:
    """The line fastText reads for option ``j``: the chosen fields joined by spaces::

        "A"    {option}
        "QA"   {question} {option}
        "CQA"  {context} {question} {option}
    """
    a, b = option_pairs(item, fields)[j]
    return f"{a} {b}" if a else b
