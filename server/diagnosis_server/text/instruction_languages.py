"""Instructions to the diagnosis in the world's most used languages besides English (R-GK-5, R-A-1).

An order to ignore the instructions is a verb of ignoring and a noun for instructions in one value; a request to
tell the user is read as such in every language listed. Matched on the NFKC case-folded text, not on the
confusables skeleton (which turns Cyrillic and Greek letters into Latin ones).
"""

from __future__ import annotations

import re
import unicodedata

from diagnosis_server.text.normalize import strip_invisible

# Verbs of ignoring or forgetting, in the imperative (and the stems that carry it in scripts without spaces).
_IGNORE = (
    # Spanish, Portuguese, Italian, French, Catalan
    "ignora", "ignoren", "ignore", "ignorez", "ignorate", "ignorar", "olvida", "olvide", "olviden", "omite",
    "descarta", "desconsidere", "desconsidera", "esqueça", "esqueca", "dimentica", "oublie", "oubliez",
    # German, Dutch, Scandinavian, Polish, Czech, Turkish, Indonesian
    "ignoriere", "ignorieren", "ignorier", "vergiss", "vergesst", "vergessen", "missachte", "negeer", "vergeet",
    "ignorer", "glem", "glöm", "zignoruj", "ignoruj", "zapomnij", "ignoruj", "ignorujte", "yok say",
    "görmezden gel", "abaikan", "lupakan",
    # Cyrillic: Russian, Ukrainian
    "игнорируй", "игнорируйте", "игнорировать", "забудь", "забудьте", "не обращай", "ігноруй", "ігноруйте",
    "забудь",
    # Greek, Arabic, Persian, Hebrew, Hindi
    "αγνόησε", "αγνοήστε", "تجاهل", "نادیده بگیر", "התעלם", "אל תתייחס", "अनदेखा", "नज़रअंदाज़", "नजरअंदाज",
    # Chinese, Japanese, Korean, Vietnamese, Thai
    "忽略", "忽视", "忽視", "无视", "無視", "忘记", "忘記", "忘れ", "무시", "잊어", "bỏ qua", "ละเว้น", "เพิกเฉย",
)  # fmt: skip
# Nouns for instructions, prompts and rules given to a model.
_INSTRUCTIONS = (
    "instrucciones", "instrucción", "instruccion", "indicaciones", "instruções", "instrucoes", "istruzioni",
    "instructions", "consignes", "directives", "anweisungen", "anweisung", "instruktionen", "vorgaben",
    "instructies", "instruktioner", "instruksjoner", "instrukcje", "polecenia", "pokyny", "talimat", "instruksi",
    "perintah", "prompt",
    "инструкци", "указани", "інструкці", "вказівк",
    "οδηγίες", "التعليمات", "تعليمات", "دستورالعمل", "دستورات", "הוראות", "निर्देश",
    "指令", "指示", "提示", "命令", "지시", "지침", "명령", "hướng dẫn", "คำสั่ง",
)  # fmt: skip
# "Tell the user", "inform the user": a value that addresses the reader of the diagnosis.
_TELL_THE_USER = (
    "dile al usuario", "dígale al usuario", "informa al usuario", "diga ao usuário", "informe o usuário",
    "di all'utente", "dis à l'utilisateur", "dites à l'utilisateur", "informez l'utilisateur",
    "sag dem benutzer", "sagen sie dem benutzer", "teile dem benutzer", "informiere den benutzer",
    "vertel de gebruiker", "powiedz użytkownikowi", "скажи пользователю", "сообщи пользователю",
    "сообщите пользователю", "скажіть користувачу", "أخبر المستخدم", "उपयोगकर्ता को बताओ", "उपयोगकर्ता को बताएं",
    "告诉用户", "告訴用戶", "通知用户", "ユーザーに伝え", "ユーザーに報告", "사용자에게 알려", "사용자에게 전달",
)  # fmt: skip


def _alternation(words: tuple[str, ...]) -> re.Pattern[str]:
    # A Latin, Cyrillic or Greek word stands whole or as a stem at a word's start; a CJK or Thai one anywhere.
    spaced = sorted({w for w in words if re.search(r"[^\W\d_]", w) and not _unspaced(w)}, key=len, reverse=True)
    unspaced = sorted({w for w in words if _unspaced(w)}, key=len, reverse=True)
    parts = [rf"(?<!\w)(?:{'|'.join(map(re.escape, spaced))})"] if spaced else []
    if unspaced:
        parts.append("|".join(map(re.escape, unspaced)))
    return re.compile("|".join(parts))


def _unspaced(word: str) -> bool:
    return any(unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI")) for ch in word)


_IGNORE_PATTERN = _alternation(_IGNORE)
_INSTRUCTIONS_PATTERN = _alternation(_INSTRUCTIONS)
_TELL_PATTERN = _alternation(_TELL_THE_USER)


def reads_as_foreign_instruction(text: str) -> bool:
    """Whether ``text`` orders the diagnosis to ignore its instructions, or asks it to tell the user, in a
    language other than English."""
    folded = unicodedata.normalize("NFKC", strip_invisible(text)).casefold()
    if _TELL_PATTERN.search(folded):
        return True
    return bool(_IGNORE_PATTERN.search(folded)) and bool(_INSTRUCTIONS_PATTERN.search(folded))
