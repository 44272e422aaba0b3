"""Importers of public QA sets (``stillweb tasks import``), one small module per format (the registry
:data:`QA_FORMATS`: FlashRAG / Search-R1 jsonl, Search-R1's verl parquet, HotpotQA, MuSiQue, KILT, ...),
into task sets over any snapshot with their evidence mapped to doc ids and a
solvability report (docs/import.md).

>>> from stillweb.corpora.tasks.importers import import_tasks, ImportOptions   # doctest: +SKIP
>>> import_tasks("snap", ["hotpot_dev_distractor_v1.json"], "hotpot", ImportOptions(answer_match="em"))  # doctest: +SKIP
"""

from stillweb.corpora.tasks.importers.base import FieldNames
from stillweb.corpora.tasks.importers.reading import FORMAT_NAMES, QA_FORMATS
from stillweb.corpora.tasks.importers.pipeline import ImportOptions, ImportSummary, import_tasks

__all__ = ["FORMAT_NAMES", "QA_FORMATS", "FieldNames", "ImportOptions", "ImportSummary", "import_tasks"]
