"""The voice announcer: speaks each public event in Mandarin or English through espeak-ng, off the referee's thread."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .console import piece_names, side_name
from .events import check_event, unknown_kind
from .worker import PlayQueue

log = logging.getLogger(__name__)

#: espeak-ng voice for each language we speak.
VOICES = {"zh": "cmn-latn-pinyin", "en": "en"}

DEBIAN_PACKAGE = "espeak-ng"

ZH_OUTCOMES = {"attacker": "进攻方胜", "defender": "防守方胜", "both": "同归于尽", "bounce": "无效"}
EN_OUTCOMES = {"attacker": "attacker survives", "defender": "defender survives", "both": "both removed",
               "bounce": "no effect"}
ZH_SIDES = {"red": "红方", "blue": "蓝方", "green": "绿方", "yellow": "黄方", "black": "黑方", "white": "白方", "purple": "紫方"}
ZH_FIXUP = {"remove": "拿走", "put back": "放回"}

_CJK = re.compile(r"[\u3400-\u9fff]")


class EspeakMissingError(RuntimeError):
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


def _zh_side(side: str) -> str:
    return ZH_SIDES.get(side, side)


def _zh_name(game: Any, piece_id: str) -> str:
    name, zh = piece_names(game, piece_id)
    return zh or name


def _zh_piece(game: Any, event: Mapping[str, Any], key: str) -> str:
    return "" if event.get(key) is None else _zh_name(game, event[key])


def _en_piece(game: Any, event: Mapping[str, Any], key: str) -> str:
    return "" if event.get(key) is None else " " + piece_names(game, event[key])[0]


def phrase(event: Mapping[str, Any], language: str, game: Any = None) -> str | None:
    """What the voice says for ``event`` in ``language`` ("zh" or "en"); None when it stays quiet.

    Only what the event says: stations, sides, outcome, and piece names only when the event carries
    them (or the rules revealed them to everyone). Free English text (an illegal move's reason, a notice)
    is spoken in English only; the Mandarin voice would garble it, so it points to the screen instead.
    Setup-phase board readings are not spoken.
    """
    if language not in VOICES:
        raise ValueError(f"language must be one of {', '.join(VOICES)}, got {language!r}")
    kind = check_event(event)
    if kind == "board":
        return None
    if kind in ("fault", "link"):  # the referee's health: words from the message catalog
        from controller.messages import render

        return render(event["say"], "zh-Hans" if language == "zh" else "en", game)
    text = _phrase(kind, event, language, game)
    if kind in ("move", "attack") and event.get("reveals"):
        if language == "zh":
            shown = "；".join(f"{_zh_side(r['owner'])}{_zh_name(game, r['piece'])} {spoken_station(str(r['station']), 'zh')}"
                             for r in event["reveals"])
            text += f"。公开：{shown}"
        else:
            shown = "; ".join(f"{side_name(r['owner'])} {piece_names(game, r['piece'])[0]} at "
                              f"{spoken_station(str(r['station']), 'en')}" for r in event["reveals"])
            text += f" Revealed: {shown}."
    return text


def _phrase(kind: str, event: Mapping[str, Any], language: str, game: Any) -> str:
    st = {k: spoken_station(str(event[k]), language) for k in ("from", "to") if k in event}
    if language == "zh":
        who = _zh_side(event["player"]) if "player" in event else ""
        if kind == "start":
            return f"开始，{who}先走"
        if kind == "turn":
            return f"轮到{who}"
        if kind == "move":
            return f"{who} {st['from']} 到 {st['to']}"
        if kind == "attack":
            mine, theirs = _zh_piece(game, event, "piece"), _zh_piece(game, event, "defender_piece")
            return (f"{who}{mine} {st['from']} 进攻 {_zh_side(event['defender'])}{theirs} {st['to']}，"
                    f"{ZH_OUTCOMES[event['outcome']]}")
        if kind == "illegal":
            return f"{who}走法违规，请放回 {st['from']}"
        if kind == "mismatch":
            stations = "、".join(spoken_station(str(e["station"]), "zh") for e in event["stations"])
            return f"棋盘不符，请检查 {stations}"
        if kind == "fixup" and not event["steps"]:
            return "请按记录摆好棋盘"
        if kind == "fixup":
            steps = []
            for step in event["steps"]:
                where, do = spoken_station(str(step["station"]), "zh"), str(step["do"])
                if do.startswith("return to "):
                    steps.append(f"{where} 退回 {spoken_station(do.removeprefix('return to '), 'zh')}")
                else:
                    steps.append(f"{where} {ZH_FIXUP.get(do, '整理')}")
            return "请整理棋盘：" + "；".join(steps)
        if kind == "fixup_done":
            return "棋盘已整理，继续"
        if kind == "game_over":
            winners = "、".join(_zh_side(w) for w in event["winners"])
            return f"游戏结束，{winners}胜" if winners else "游戏结束，和棋"
        if kind == "paused":
            return "暂停"
        if kind == "resumed":
            return "继续"
        if kind == "setup":
            return f"{who}布阵{'完毕' if event['status'] == 'registered' else '有误'}"
        if kind == "undo":
            return f"裁判撤销上一步，轮到{_zh_side(event['turn'])}" if event["turn"] else "裁判撤销上一步"
        message = str(event["message"])
        return f"通知：{message}" if _CJK.search(message) else "有新通知，请看屏幕"
    who = side_name(event["player"]) if "player" in event else ""
    if kind == "start":
        return f"Game starts. {who} to move."
    if kind == "turn":
        return f"{who} to move."
    if kind == "move":
        return f"{who}, {st['from']} to {st['to']}."
    if kind == "attack":
        mine, theirs = _en_piece(game, event, "piece"), _en_piece(game, event, "defender_piece")
        return (f"{who}{mine} from {st['from']} attacks {side_name(event['defender'])}{theirs} at {st['to']}: "
                f"{EN_OUTCOMES[event['outcome']]}.")
    if kind == "illegal":
        reason = f" {event['reason']}." if event.get("reason") else ""
        return f"Illegal move by {who}.{reason} Put the piece back on {st['from']}."
    if kind == "mismatch":
        stations = ", ".join(spoken_station(str(e["station"]), "en") for e in event["stations"])
        return f"Board mismatch. Check {stations}."
    if kind == "fixup" and not event["steps"]:
        return f"Set the board: {event.get('message') or 'see the screen'}."
    if kind == "fixup":
        steps = []
        for step in event["steps"]:
            where, do = spoken_station(str(step["station"]), "en"), str(step["do"])
            if do.startswith("return to "):
                steps.append(f"{where} back to {spoken_station(do.removeprefix('return to '), 'en')}")
            else:
                steps.append(f"{where}, {do}")
        return "Fix the board: " + "; ".join(steps) + "."
    if kind == "fixup_done":
        return "Board fixed. Play on."
    if kind == "game_over":
        winners = [side_name(w) for w in event["winners"]]
        if not winners:
            return "Game over. Draw."
        return f"Game over. {' and '.join(winners)} {'wins' if len(winners) == 1 else 'win'}."
    if kind == "paused":
        return "Game paused."
    if kind == "resumed":
        return "Game resumed."
    if kind == "setup":
        return f"{who}'s deployment {event['status']}."
    if kind == "undo":
        turn = f" {side_name(event['turn'])} to move." if event["turn"] else ""
        return f"Last ruling taken back.{turn}"
    return f"Notice: {event['message']}"


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
        command = espeak_command(self.executable, self.language, speed=self.speed, wav=wav)
        result = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=self.timeout,
                                check=False)
        if result.returncode != 0:
            raise RuntimeError(f"espeak-ng exited {result.returncode}: {result.stderr.decode(errors='replace')}")
        self.recent.append(text)
