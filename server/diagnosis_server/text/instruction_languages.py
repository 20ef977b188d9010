"""Instructions to the diagnosis in the world's most used languages besides English (R-GK-5, R-A-1).

Each concept an English instruction is made of has a table of its words in other languages:

- an order to ignore the instructions: a verb of ignoring or forgetting (``_IGNORE``) and a noun for instructions,
  prompts or orders (``_INSTRUCTIONS``) in one value;
- alone: a request to tell the user (``_TELL_THE_USER``), "the real cause is" (``_REAL_CAUSE``), "respond only
  with" (``_RESPOND_ONLY``), "note to the diagnoser" (``_NOTE_TO``), "you are now the verifier" (``_YOU_ARE``);
- an order to mark a claim confirmed: a verb of marking (``_MARK``) near a word for confirmed or verified
  (``_CONFIRMED``), in either order (the verb ends the sentence in Korean, Hindi, Turkish);
- a role label opening the value or a sentence ("assistant:"), or a system label ("system:") in a value that also
  orders something (a verb of marking or ignoring, a word for confirmed).

A word stands whole or as a stem at a word's start (written with a trailing ``$``: whole only); a word of a script
written without spaces (CJK, kana, Hangul, Thai) anywhere. Matched on the NFKC case-folded text, not on the
confusables skeleton (which turns Cyrillic and Greek letters into Latin ones), and again with its accents and
Arabic vowel marks dropped ("nao leve em conta", "انسَ").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from diagnosis_server.text.alternation import anchored_alternation
from diagnosis_server.text.normalize import strip_invisible

# Verbs of ignoring or forgetting, in the imperative (and the stems that carry it in scripts without spaces).
_IGNORE = (
    # Spanish, Portuguese, Italian, French, Catalan
    "ignora", "ignoren", "ignore", "ignorez", "ignorate", "ignorar", "olvida", "olvide", "olviden", "omite",
    "descarta", "desconsidere", "desconsidera", "esqueça", "esqueca", "dimentica", "oublie", "oubliez",
    "ne tenez pas compte", "ne tiens pas compte", "ne tenez aucun compte", "ne prenez pas en compte",
    "ne prends pas en compte", "non considerare", "non considerate", "non tenere conto", "non tenete conto",
    "no tengas en cuenta", "no tenga en cuenta", "não leve em conta", "não levem em conta", "não considere",
    "não considera", "no consideres",
    # German, Dutch, Scandinavian, Polish, Czech, Turkish, Indonesian
    "ignoriere", "ignorieren", "ignorier", "vergiss", "vergesst", "vergessen", "missachte", "negeer", "vergeet",
    "ignorer", "glem", "glöm", "zignoruj", "ignoruj", "zapomnij", "ignoruj", "ignorujte", "yok say",
    "görmezden gel", "abaikan", "lupakan", "pomiń$", "pomińcie$", "unut$", "unutun$", "unutunuz$",
    # Cyrillic: Russian, Ukrainian, and Russian in Latin letters
    "игнорируй", "игнорируйте", "игнорировать", "забудь", "забудьте", "не обращай", "ігноруй", "ігноруйте",
    "забудь", "ignoriruy", "ignoriruj", "ignoriruyte", "ignorirujte", "zabud", "ne obrashchay",
    # Greek, Arabic, Persian, Hebrew, Hindi
    "αγνόησε", "αγνοήστε", "تجاهل", "انس$", "انسى$", "نادیده بگیر", "התעלם", "אל תתייחס", "अनदेखा", "नज़रअंदाज़",
    "नजरअंदाज", "भूल जाओ", "भूल जाइए", "भूल जाएं", "भूल जाएँ",
    # Chinese, Japanese, Korean, Vietnamese, Thai
    "忽略", "忽视", "忽視", "无视", "無視", "忘记", "忘記", "忘れ", "무시", "잊어", "bỏ qua", "quên$", "ละเว้น",
    "เพิกเฉย",
)  # fmt: skip
# Nouns for instructions, prompts, rules and orders given to a model.
_INSTRUCTIONS = (
    "instrucciones", "instrucción", "instruccion", "indicaciones", "instruções", "instrucoes", "istruzioni",
    "instructions", "consignes", "directives", "anweisungen", "anweisung", "instruktionen", "vorgaben",
    "instructies", "opdrachten", "instruktioner", "instruksjoner", "instrukcje", "instrukcji", "polecenia",
    "pokyny", "talimat", "instruksi", "perintah", "prompt",
    "инструкци", "указани", "інструкці", "вказівк", "instruktsi", "instrukci", "ukazani",
    "οδηγίες", "التعليمات", "تعليمات", "الأوامر", "أوامر", "الإرشادات", "التوجيهات", "دستورالعمل", "دستورات",
    "הוראות", "निर्देश",
    "指令", "指示", "提示", "命令", "지시", "지침", "명령", "프롬프트", "hướng dẫn", "chỉ thị", "chỉ dẫn", "คำสั่ง",
)  # fmt: skip
# "Tell the user", "inform the user": a value that addresses the reader of the diagnosis.
_TELL_THE_USER = (
    "dile al usuario", "dígale al usuario", "informa al usuario", "diga ao usuário", "informe o usuário",
    "diga ao operador", "di all'utente", "di' all'utente", "di' all'operatore", "dis à l'utilisateur",
    "dites à l'utilisateur", "informez l'utilisateur", "dites-le à l'opérateur", "dis-le à l'opérateur",
    "dites-le à l'utilisateur", "dites à l'opérateur",
    "sag dem benutzer", "sagen sie dem benutzer", "teile dem benutzer", "informiere den benutzer",
    "vertel de gebruiker", "zeg tegen de gebruiker", "powiedz użytkownikowi", "powiedz operatorowi",
    "kullanıcıya söyle", "скажи пользователю", "сообщи пользователю", "сообщите пользователю",
    "скажіть користувачу", "أخبر المستخدم", "أخبر المشغل", "उपयोगकर्ता को बताओ", "उपयोगकर्ता को बताएं",
    "उपयोगकर्ता को बताइए", "nói với người dùng", "告诉用户", "告訴用戶", "通知用户", "ユーザーに伝え",
    "ユーザーに報告", "사용자에게 알려", "사용자에게 전달",
)  # fmt: skip
# "The real (true, root) cause is": a value that states the diagnosis's conclusion for it.
_REAL_CAUSE = (
    "vraie cause est", "véritable cause est", "cause réelle est", "cause racine est", "causa reale è",
    "vera causa è", "causa radice è", "verdadera causa es", "causa real es", "causa raíz es", "verdadeira causa é",
    "causa real é", "causa raiz é", "wahre ursache ist", "eigentliche ursache ist", "tatsächliche ursache ist",
    "echte oorzaak is", "werkelijke oorzaak is", "ware oorzaak is", "prawdziwą przyczyną", "prawdziwa przyczyna",
    "asıl neden", "gerçek neden", "asıl sebep", "gerçek sebep", "настоящая причина", "истинная причина",
    "реальная причина", "справжня причина", "nastoyashchaya prichina", "istinnaya prichina",
    "nguyên nhân thực sự", "nguyên nhân thật sự", "असली कारण", "वास्तविक कारण", "السبب الحقيقي", "السبب الفعلي",
    "진짜 원인", "실제 원인", "진정한 원인", "본当の原因", "本当の原因", "真の原因", "真正的原因", "真正原因",
    "真实原因", "真實原因",
)  # fmt: skip
# "Respond (answer, reply) only with".
_RESPOND_ONLY = (
    "réponds uniquement", "répondez uniquement", "réponds seulement", "répondez seulement", "rispondi solo",
    "rispondi soltanto", "rispondete solo", "rispondi unicamente", "responde solo", "responda solo",
    "responde solamente", "responde únicamente", "responda apenas", "responda somente", "responde apenas",
    "antworte nur", "antworte ausschließlich", "antworten sie nur", "antwoord alleen", "antwoord uitsluitend",
    "odpowiedz tylko", "odpowiadaj tylko", "odpowiedz wyłącznie", "sadece cevap ver", "yalnızca yanıt ver",
    "ile yanıt ver", "ile cevap ver", "отвечай только", "ответь только", "ответьте только", "otvechay tolko",
    "otvet tolko", "chỉ trả lời", "أجب فقط", "فقط أجب", "केवल उत्तर", "सिर्फ उत्तर", "सिर्फ़ उत्तर",
    "로만 답", "만 답하", "로만 응답", "만 응답", "のみで答え", "だけで答え", "のみ回答", "只回答", "仅回答",
    "只回复", "仅回复",
)  # fmt: skip
# "Note to the diagnoser (the assistant)": a value written to the reader of the tool output.
_NOTE_TO = (
    "note pour le diagnostic", "note au diagnostic", "note à l'assistant", "note pour l'assistant",
    "nota per il diagnostic", "nota per la diagnosi", "nota per l'assistente", "nota para el diagnóstico",
    "nota para el asistente", "nota para o diagnóstico", "nota ao diagnóstico", "nota para o assistente",
    "hinweis an die diagnose", "hinweis für die diagnose", "hinweis an den assistenten", "notiz an die diagnose",
    "notiz für den assistenten", "notitie voor de diagnose", "opmerking voor de diagnose",
    "notitie voor de assistent", "uwaga dla diagnost", "uwaga dla asystenta", "notatka dla diagnost",
    "notatka dla asystenta", "teşhis için not", "tanılayıcıya not", "asistana not", "примечание для диагност",
    "заметка для диагност", "примечание для ассистент", "заметка для ассистент", "ghi chú cho trình chẩn đoán",
    "lưu ý cho trợ lý", "ghi chú cho trợ lý", "ملاحظة للمشخص", "ملاحظة للمساعد", "निदानकर्ता के लिए नोट",
    "सहायक के लिए नोट", "진단자에게", "어시스턴트에게", "診断者へ", "给诊断", "致诊断",
)  # fmt: skip
# "You are now the verifier (the assistant)": a value that gives the diagnosis a role; in Turkish, the role
# with its second-person ending ("doğrulayıcısın").
_YOU_ARE = (
    "tu es maintenant", "vous êtes maintenant", "désormais tu es", "désormais vous êtes", "ahora eres",
    "ora sei", "adesso sei", "agora você é", "agora és", "du bist jetzt", "du bist nun", "ab jetzt bist du",
    "je bent nu", "jij bent nu", "jesteś teraz", "teraz jesteś", "теперь ты", "ты теперь", "bây giờ bạn là",
    "이제 당신은", "너는 이제", "今からあなたは", "あなたは今から", "你现在是", "從現在起你是", "从现在起你是",
    "أنت الآن", "अब तुम", "अब आप",
    "doğrulayıcısın$", "doğrulayıcısınız$", "asistansın$", "asistansınız$", "denetçisin$", "modelsin$",
)  # fmt: skip
# Verbs of marking or classifying, in the imperative.
_MARK = (
    "marque$", "marquez$", "classe$", "classez$", "segna$", "segnate$", "contrassegna$", "marca$", "marcate$",
    "classifica$", "clasifica$", "marquen$", "classifique$", "markiere$", "markieren$", "klassifiziere$",
    "markeer$", "classificeer$", "oznacz$", "oznaczcie$", "zaklasyfikuj$", "işaretle$", "işaretleyin$",
    "sınıflandır$", "отметь$", "отметьте$", "пометь$", "пометьте$", "классифицируй$", "đánh dấu",
    "phân loại", "ضع علامة", "صنف$", "चिह्नित", "वर्गीकृत", "표시", "분류", "マーク", "分類し", "标记", "標記",
    "标为", "標為",
)  # fmt: skip
# Words for confirmed or verified.
_CONFIRMED = (
    "confirmé", "vérifié", "verificat", "confermat", "verificad", "confirmad", "bestätigt", "verifiziert",
    "bevestigd", "geverifieerd", "zweryfikowan", "potwierdzon", "onaylanmış", "doğrulanmış", "onaylı",
    "подтвержден", "проверен", "đã xác minh", "đã xác nhận", "مؤكد", "موثق", "تم التحقق", "सत्यापित", "पुष्टि",
    "확인됨", "검증됨", "확인된", "確認済", "検証済", "已确认", "已验证", "已核实", "已確認", "已驗證",
)  # fmt: skip
# Role labels: an assistant's (a turn of the conversation, alone) and the system's (with an order beside it).
_ASSISTANT_LABELS = (
    "assistente", "asistente", "asystent", "assistent", "ассистент", "asistan", "trợ lý", "어시스턴트",
    "アシスタント", "助手", "المساعد", "सहायक",
)  # fmt: skip
_SYSTEM_LABELS = (
    "système", "sistema", "systeem", "system", "sistem", "система", "hệ thống", "시스템", "システム", "系统",
    "系統", "النظام", "सिस्टम",
)  # fmt: skip
# Two words of a pair stand this near (in characters) to be read together.
_NEAR = 60

# Combining marks dropped for the reading without accents: Latin, Greek and Cyrillic diacritics, Arabic vowel marks.
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u064b-\u065f\u0670]")


def without_accents(text: str) -> str:
    """``text`` with its accents (and Arabic vowel marks) dropped: "ïgnörë" is "ignore", "não" is "nao"."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFKD", text)))


def _unspaced(word: str) -> bool:
    return any(unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI")) for ch in word)


def _forms(words: Iterable[str]) -> set[str]:
    """Each word as written and without its accents."""
    return {form for word in words for form in (word, without_accents(word))}


def _bounds(word: str) -> tuple[str, str]:
    """A word of a spaced script stands at a word's start (and ends one, when written with a trailing ``$``); a
    CJK, kana, Hangul or Thai one anywhere."""
    if _unspaced(word):
        return "", ""
    return r"(?<!\w)", r"(?!\w)" if word.endswith("$") else ""


def _compiled(words: Iterable[str]) -> re.Pattern[str]:
    """One search for any of ``words`` where it stands (``_bounds``), anchored at its rarest character."""
    forms = _forms(words)
    bounded = {form.removesuffix("$"): _bounds(form) for form in forms}
    return anchored_alternation(bounded, bounds=bounded.__getitem__)


def _alternation(words: Iterable[str]) -> str:
    """The words as a plain alternation (for a pattern that places them, such as a label's)."""
    parts = sorted(_forms(words), key=len, reverse=True)
    return "|".join(re.escape(w.removesuffix("$")) + ("" if _unspaced(w) else r"(?!\w)") for w in parts)


_IGNORE_PATTERN = _compiled(_IGNORE)
_INSTRUCTIONS_PATTERN = _compiled(_INSTRUCTIONS)
_ALONE_PATTERN = _compiled((*_TELL_THE_USER, *_REAL_CAUSE, *_RESPOND_ONLY, *_NOTE_TO, *_YOU_ARE))
_MARK_PATTERN = _compiled(_MARK)
_CONFIRMED_PATTERN = _compiled(_CONFIRMED)
# A label opening the value or a sentence, then a colon.
_LABEL = r"(?:^|[.;!?。！？] )(?:{}) ?[:：]"
_ASSISTANT_LABEL = re.compile(_LABEL.format(_alternation(_ASSISTANT_LABELS)))
_SYSTEM_LABEL = re.compile(_LABEL.format(_alternation(_SYSTEM_LABELS)))


def _near(first: re.Pattern[str], second: re.Pattern[str], text: str) -> bool:
    """Whether a match of ``first`` and one of ``second`` stand within ``_NEAR`` characters of each other, in
    either order (one pass over each pattern's matches: linear in the text)."""
    starts = [m.start() for m in first.finditer(text)]
    if not starts:
        return False
    others = [m.start() for m in second.finditer(text)]
    i = 0
    for start in starts:
        while i < len(others) and others[i] < start - _NEAR:
            i += 1
        if i < len(others) and others[i] <= start + _NEAR:
            return True
    return False


def _orders(folded: str) -> bool:
    if _ALONE_PATTERN.search(folded) or _ASSISTANT_LABEL.search(folded):
        return True
    if _IGNORE_PATTERN.search(folded) and _INSTRUCTIONS_PATTERN.search(folded):
        return True
    if _near(_MARK_PATTERN, _CONFIRMED_PATTERN, folded):
        return True
    return bool(_SYSTEM_LABEL.search(folded)) and any(
        p.search(folded) for p in (_MARK_PATTERN, _CONFIRMED_PATTERN, _IGNORE_PATTERN)
    )


def reads_as_foreign_instruction(text: str) -> bool:
    """Whether ``text`` addresses the diagnosis in a language other than English: orders it to ignore its
    instructions, to tell the user, to answer only so or to mark claims confirmed; states the real cause for it;
    gives it a role or speaks as its assistant or system. Read as written and without accents."""
    folded = " ".join(unicodedata.normalize("NFKC", strip_invisible(text)).casefold().split())
    if _orders(folded):
        return True
    bare = without_accents(folded)
    return bare != folded and _orders(bare)
