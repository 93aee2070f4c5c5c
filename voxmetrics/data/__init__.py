"""Data model, readers and validation."""

from typing import TYPE_CHECKING

from voxmetrics._lazy import lazy_names

if TYPE_CHECKING:  # for static tools; at run time each name is imported on first use
    from voxmetrics.data.model import META_COLUMNS, EmbeddingSet, ScoreMatrix
    from voxmetrics.data.predictions import AttributePrediction, join_predictions
    from voxmetrics.data.readers import (
        FORMATS,
        SCORE_COLUMNS,
        Source,
        detect_format,
        negate_scores,
        read_embeddings,
        read_scores,
        read_table,
    )
    from voxmetrics.data.recipe import AttackerRecipe
    from voxmetrics.data.study import Condition, Study, StudySettings
    from voxmetrics.data.studybuild import build_study
    from voxmetrics.data.studyfile import (
        FILE_VERSION,
        load_study,
        save_study,
        study_from_bytes,
        study_to_bytes,
    )
    from voxmetrics.data.transcripts import read_labels, read_transcripts
    from voxmetrics.data.utility import Utility
    from voxmetrics.data.vpc import VPCImport, read_vpc_tree, read_vpc_zip
    from voxmetrics.data.writers import write_embeddings, write_scores

__all__ = [
    "FILE_VERSION",
    "FORMATS",
    "META_COLUMNS",
    "SCORE_COLUMNS",
    "AttackerRecipe",
    "AttributePrediction",
    "Condition",
    "EmbeddingSet",
    "ScoreMatrix",
    "Source",
    "Study",
    "StudySettings",
    "Utility",
    "VPCImport",
    "build_study",
    "detect_format",
    "join_predictions",
    "load_study",
    "negate_scores",
    "read_embeddings",
    "read_labels",
    "read_scores",
    "read_table",
    "read_transcripts",
    "read_vpc_tree",
    "read_vpc_zip",
    "save_study",
    "study_from_bytes",
    "study_to_bytes",
    "write_embeddings",
    "write_scores",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        ".model": "META_COLUMNS EmbeddingSet ScoreMatrix",
        ".predictions": "AttributePrediction join_predictions",
        ".readers": "FORMATS SCORE_COLUMNS Source detect_format negate_scores read_embeddings "
        "read_scores read_table",
        ".recipe": "AttackerRecipe",
        ".study": "Condition Study StudySettings",
        ".studybuild": "build_study",
        ".studyfile": "FILE_VERSION load_study save_study study_from_bytes study_to_bytes",
        ".transcripts": "read_labels read_transcripts",
        ".utility": "Utility",
        ".vpc": "VPCImport read_vpc_tree read_vpc_zip",
        ".writers": "write_embeddings write_scores",
    },
)
"""Each name is imported from its module when first read: pandas and the readers of every
format load only when a name that needs them is used (``import voxmetrics`` stays cheap)."""
