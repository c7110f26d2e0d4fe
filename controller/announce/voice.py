"""The voice announcer: speaks each public event in Mandarin or English through espeak-ng, off the referee's thread."""

from __future__ import annotations

import logging
import re
import shutil
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

from .console import event_words
from .events import unknown_kind
from .worker import PlayQueue

log = logging.getLogger(__name__)

#: espeak-ng voice for each language we speak.
VOICES = {"zh": "cmn-latn-pinyin", "en": "en"}

DEBIAN_PACKAGE = "espeak-ng"

#: the catalog each voice speaks from: Mandarin reads Simplified Chinese
CATALOG = {"zh": "zh-Hans", "en": "en"}


class EspeakMissingError(FaceDownError, RuntimeError):
    """espeak-ng is not installed, so nothing can be spoken."""


def available() -> bool:
    """Whether espeak-ng is on PATH."""
    return shutil.which("espeak-ng") is not None


def spoken_station(station: str, language: str) -> str:
    """A station id as the voice should read it.

    The Pinyin voice would read ``a4`` as the syllable *à* (tone 4), so in Mandarin letters are spoken
    as capitals, apart from the numbers: ``a4`` -> ``A 4``. English reads ``a4`` well as it is.
    """
    if language == "zh":
        return re.sub(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ", station.upper())
    return station.lower()


def phrase(event: Mapping[str, Any], language: str, game: Any = None) -> str | None:
    """What the voice says for ``event`` in ``language`` ("zh" or "en"); None when it stays quiet.

    The event's public message rendered from the catalog (Mandarin from the Simplified Chinese one), stations
    spelled for the voice: only what the event says, piece names only where the event carries them (or the rules
    showed them to everyone). Setup-phase board readings are not spoken.
    """
    if language not in VOICES:
        raise ValueError(f"language must be one of {', '.join(VOICES)}, got {language!r}")
    return event_words(event, CATALOG[language], game, station=lambda s: spoken_station(s, language))


def espeak_command(executable: str, language: str, *, speed: int, wav: Path | None = None) -> list[str]:
    """The espeak-ng command line that reads UTF-8 text from stdin in ``language``'s voice."""
    command = [executable, "-v", VOICES[language], "-s", str(speed), "-b", "1"]
    if wav is not None:
        command += ["-w", str(wav)]
    return [*command, "--stdin"]


class VoiceAnnouncer:
    """Speaks each event's :func:`phrase` through espeak-ng on a worker thread.

    ``wav_dir``: write each phrase to a numbered WAV file there instead of the speakers (for a box with
    no sound card, or to check what would be said).
    """

    def __init__(
        self,
        language: str = "zh",
        *,
        game: Any = None,
        speed: int = 150,
        wav_dir: str | Path | None = None,
        maxsize: int = 8,
        timeout: float = 30.0,
    ) -> None:
        if language not in VOICES:
            raise ValueError(f"language must be one of {', '.join(VOICES)}, got {language!r}")
        executable = shutil.which("espeak-ng")
        if executable is None:
            raise EspeakMissingError(
                f"espeak-ng is not installed (not on PATH); install the Debian package: "
                f"sudo apt install {DEBIAN_PACKAGE}"
            )
        self.executable = executable
        self.language = language
        self.game = game
        self.speed = speed
        self.timeout = timeout
        self.wav_dir = Path(wav_dir) if wav_dir is not None else None
        if self.wav_dir is not None:
            self.wav_dir.mkdir(parents=True, exist_ok=True)
        self.recent: deque[str] = deque(maxlen=50)  # the last phrases actually spoken, oldest first
        self._count = 0
        self._unknown: set[str] = set()
        self._queue: PlayQueue[str] = PlayQueue(f"voice-{language}", self._speak, maxsize=maxsize)

    def announce(self, event: dict) -> None:
        """Queue what to say for ``event``; raises EventError if it is malformed."""
        if unknown_kind(event, self._unknown, log):
            return
        text = phrase(event, self.language, self.game)
        if text is not None:
            self.say(text)

    def say(self, text: str) -> None:
        self._queue.submit(text)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued has been spoken; False if ``timeout`` seconds passed first."""
        return self._queue.flush(timeout)

    def close(self) -> None:
        """Stop speaking; what is still queued is not said."""
        self._queue.close()

    def _speak(self, text: str) -> None:
        wav = None
        if self.wav_dir is not None:
            self._count += 1
            wav = self.wav_dir / f"{self._count:04d}.wav"
        import subprocess  # here, not at import: `facedown play` without a voice starts ~5 ms sooner

        command = espeak_command(self.executable, self.language, speed=self.speed, wav=wav)
        result = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=self.timeout,
                                check=False)
        if result.returncode != 0:
            raise RuntimeError(f"espeak-ng exited {result.returncode}: {result.stderr.decode(errors='replace')}")
        self.recent.append(text)
