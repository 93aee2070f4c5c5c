"""Audio to speaker embeddings: decoding, extractors (ECAPA, GE2E), cache and conditions.

Decoded audio is brought to -30 LUFS before embedding by default (as VoicePrivacy 2024). The
attacker back-ends that turn embeddings into scores are :mod:`voxmetrics.embeddings.backends`.

Importing this package is cheap: torch, torchaudio and speechbrain load only when an extractor
is built.
"""

from voxmetrics.embeddings.audio import (
    AUDIO_EXTENSIONS,
    DEFAULT_LOUDNESS,
    DEFAULT_MAX_ZIP_BYTES,
    AudioDecodeError,
    decode_audio,
    extract_zip,
    normalise_loudness,
    read_manifest,
    resolve_audio_path,
)
from voxmetrics.embeddings.cache import EmbeddingCache, audio_hash, default_cache_dir
from voxmetrics.embeddings.conditions import (
    ATTACKER_OF_SCENARIO,
    ORIGINAL,
    Condition,
    conditions_frame,
    conditions_from_embeddings,
    study_conditions,
)
from voxmetrics.embeddings.extractors import (
    DEFAULT_ECAPA,
    EcapaExtractor,
    ExtractionResult,
    Extractor,
    Ge2eExtractor,
    extract_embeddings,
    load_extractor,
    select_device,
)

__all__ = [
    "ATTACKER_OF_SCENARIO",
    "AUDIO_EXTENSIONS",
    "DEFAULT_ECAPA",
    "DEFAULT_LOUDNESS",
    "DEFAULT_MAX_ZIP_BYTES",
    "ORIGINAL",
    "AudioDecodeError",
    "Condition",
    "EcapaExtractor",
    "EmbeddingCache",
    "ExtractionResult",
    "Extractor",
    "Ge2eExtractor",
    "audio_hash",
    "conditions_frame",
    "conditions_from_embeddings",
    "decode_audio",
    "default_cache_dir",
    "extract_embeddings",
    "extract_zip",
    "load_extractor",
    "normalise_loudness",
    "read_manifest",
    "resolve_audio_path",
    "select_device",
    "study_conditions",
]
