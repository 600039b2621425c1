"""The upstream UnQover word lists: pinned commit, checksums, download and cache.

The project never ships these files. ``resolve_word_lists(None)`` downloads them once from the pinned commit of
allenai/unqover (Apache-2.0), checks every file's SHA-256 against the table below and caches them; a local
folder passed by the user is used as it is (custom lists are allowed and reported as such).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from unqover.env import word_lists_folder
from unqover.errors import UnqoverError, first_line
from unqover.lexicon.wordlists import WordLists

UPSTREAM_REPO = "allenai/unqover"
UPSTREAM_COMMIT = "3e47969b78acc0de436f9d17c9ab1b2f6a108ff0"
UPSTREAM_URL = f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{UPSTREAM_COMMIT}/word_lists"
DOWNLOAD_TIMEOUT_S = 20.0

#: SHA-256 of every file of ``word_lists/`` at ``UPSTREAM_COMMIT``.
UPSTREAM_SHA256 = {
    "activities/biased_country": "a7b92310efeec39dd11583d0df137f0f8907938c89cb7df8f4ac6f0af8d8043f",
    "activities/biased_ethnicity": "c7152d144ccf983316f4f7a47d8e3457f6c2670d35efce16bd0fba5fb5013592",
    "activities/biased_religion": "c7152d144ccf983316f4f7a47d8e3457f6c2670d35efce16bd0fba5fb5013592",
    "activities/occupation_demo": "757524748e90208af30c03db21f23009eaa6aee3af88fcc3aa3ed4f88e65a269",
    "activities/occupation_rev1": "2922baf88fa18267c46776c36fb09d30a21112abe4e15b867973d8585773ea77",
    "fillers/newsqa": "a1fb8ff08af8bca8cb2121325b666305ff085ae8a56418d62880f9e22958e91c",
    "nouns/subjects/country": "4806e08b279f099f56e1ba5859f71e4360c24260b7fd0b456aac1ac252d85281",
    "nouns/subjects/country_bert": "9a9d4d99f1739454d4861dbe70e4bc46f9b30425cada3bf0d951b57c5dbd4436",
    "nouns/subjects/country_demo": "64b780d87be070e174b4b310785d95b395313ba0b0013195ea16a883095e83d4",
    "nouns/subjects/country_roberta": "1918e48ade75b630521143054f084ca69b4ebaa090acde9ac701aea8e080806d",
    "nouns/subjects/ethnicity": "a2008f4362cde3d48d99ad000471fdd5aa8b3d05f1e4a114b321413b0dd89158",
    "nouns/subjects/ethnicity_bert": "ff5379801c2c9b3c20dccdc6d77e91e6f646fdb6d08e215fd9b77364578ab7ce",
    "nouns/subjects/ethnicity_roberta": "ff5379801c2c9b3c20dccdc6d77e91e6f646fdb6d08e215fd9b77364578ab7ce",
    "nouns/subjects/female": "40aed064f32bb31b8675832b52fc9782c6064759b4d42d3e8b37c5271cf3cc88",
    "nouns/subjects/female_bert": "c069ba753e29bdedb69cc37a74e5c2a716fe1b4ab2551ef4ba63062f17f174d7",
    "nouns/subjects/female_demo": "fd8ee0859c603402060c6e346f9d87137ffcb7aa73c2a7219b7723806bdffc7e",
    "nouns/subjects/female_roberta": "d61a78d03b6e644903f122da4eb5f5d2b330ed5b923bf993567a0be0102861f1",
    "nouns/subjects/male": "c358a107602926bcd60e8e48baa75ca6acfbc6094c5b7fe42fc8a5680e366a47",
    "nouns/subjects/male_bert": "a8154d642e06a34851a89b9871c0d8be8142aaa0d2f2070d3d93e7ed00604727",
    "nouns/subjects/male_demo": "c268ac83d05340a60b08f18315032605648cc48db393cdfbeab8eae89cde57ff",
    "nouns/subjects/male_roberta": "137c94631ffe515eabc4cb382445c6356cfc8fc6b3a16a8fa5039737c1f465f7",
    "nouns/subjects/religion": "6b22fa2e9fa1e212d75290f0063d822e23db28eaeae58d0e3f51b641f483f4eb",
    "nouns/subjects/religion_bert": "6b22fa2e9fa1e212d75290f0063d822e23db28eaeae58d0e3f51b641f483f4eb",
    "nouns/subjects/religion_roberta": "0c0589d5b7a3a1c28352f35ba8e99cca7d91d9fe3778fdb6b265c59b48acfa3f",
    "slots/country_demo": "fa52db35923f43e35c286e4ae204eca77e646ff9af9c6d1ae6f85c90c3b31abc",
    "slots/country_noact": "95c5260ee32c463846e26896ec476df69ecc67874a90743a36668430441fa287",
    "slots/country_noact_lm": "73a3eaad4c8c13b2da3e411df6822cb4bbe98fb3d4f92f990add4c22f0e6d61f",
    "slots/ethnicity_noact": "8ee8da4f0fff82d31959a464adc6cf495c17d2dea81949e8daa027063f5f9e5d",
    "slots/ethnicity_noact_lm": "543abaedf193ec966ab42355e11ec0bded7b2341ad116552da62e61f88ed6ec0",
    "slots/gender_demo": "cdb651bcd3338b8ca9ad9e63d22b65bd2756f37bfa00ddc19e437f895c2af2ce",
    "slots/gender_noact": "d575a912dde76fdacf4e083a3cbf42a0e64c7c79b8ce6f5a11db3fda657a46ea",
    "slots/gender_noact_lm": "63d3840805c700eedb7f37ab96e9bd3da304137e41f6df5d93a75415df13c992",
    "slots/religion_noact": "2bb683ebab729554e11aca02de511b443ade6d186f70f61c52a151220df113fa",
    "slots/religion_noact_lm": "f32a75b7c77b5108f9f233b0f0b8f92041b159a79020ac9ab1f8cde8fd062d74",
}

_HOW_TO_PASS = (
    "Pass a local copy with --word-lists PATH (the word_lists/ folder of "
    f"https://github.com/{UPSTREAM_REPO} at commit {UPSTREAM_COMMIT[:7]})."
)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class WordListsUnavailable(UnqoverError):
    """The pinned word lists are neither cached nor downloadable: ``reason`` says why, without the advice."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}. {_HOW_TO_PASS}")
        self.reason = reason


def matches_upstream(root: Path) -> bool:
    """True when ``root`` holds every upstream file with its pinned checksum."""
    return all(
        (root / name).is_file() and sha256_file(root / name) == digest
        for name, digest in UPSTREAM_SHA256.items()
    )


def default_cache_dir() -> Path:
    """``$UNQOVER_CACHE`` or ``$XDG_CACHE_HOME/unqover`` (``~/.cache/unqover``)."""
    if os.environ.get("UNQOVER_CACHE"):
        return Path(os.environ["UNQOVER_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "unqover"


def _offline() -> bool:
    return any(
        os.environ.get(var, "").lower() in ("1", "true", "yes")
        for var in ("HF_HUB_OFFLINE", "UNQOVER_OFFLINE")
    )


def _download(url: str, timeout: float) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def download_upstream(
    cache_dir: Path | None = None, base_url: str | None = None, timeout: float = DOWNLOAD_TIMEOUT_S
) -> Path:
    """Download, verify and cache the pinned upstream word lists; return the cached folder.

    A verified cache is reused without any network access. The folder appears only when every file
    arrived and matched its checksum, so an interrupted download leaves nothing half-written.
    """
    target = (cache_dir or default_cache_dir()) / "word_lists" / UPSTREAM_COMMIT
    if target.is_dir() and matches_upstream(target):
        return target
    if _offline():
        raise WordListsUnavailable(
            "The UnQover word lists are not cached and downloads are disabled (offline mode)"
        )
    base_url = (base_url or os.environ.get("UNQOVER_WORD_LISTS_URL") or UPSTREAM_URL).rstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
    try:
        for name, digest in UPSTREAM_SHA256.items():
            url = f"{base_url}/{name}"
            try:
                data = _download(url, timeout)
            except (urllib.error.URLError, OSError) as err:
                raise WordListsUnavailable(
                    f"Could not download the UnQover word lists ({url}: {first_line(err)})"
                ) from err
            if hashlib.sha256(data).hexdigest() != digest:
                raise UnqoverError(
                    f"Checksum mismatch for {url}: the download is not the pinned upstream file. {_HOW_TO_PASS}"
                )
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def resolve_word_lists(path: str | Path | None = None, cache_dir: Path | None = None) -> WordLists:
    """The user's folder when given (else ``UNQOVER_WORD_LISTS``'s), else the verified upstream lists (downloaded
    once, then cached)."""
    path = word_lists_folder(path)
    if path is not None:
        return WordLists(path)
    return WordLists(download_upstream(cache_dir))
