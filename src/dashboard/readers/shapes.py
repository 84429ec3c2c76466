"""Record shapes that nest their fields: each is recognised and flattened to plain field names.

OpenReview API v1 (``content.title``) and v2 (``content.title.value``) notes, with ``venueid`` and
the decision kept (``content.decision``, a Decision reply in ``details``, else the ``venue`` text) and the
official reviews' scores among the replies gathered as ``ratings`` and ``confidences``;
arXiv metadata snapshot records (``authors_parsed``, ``versions``, ``journal-ref``, ``categories``);
Papers with Code links records (``repo_url`` + ``paper_url``/``paper_arxiv_id``), which are joined
to papers rather than read as papers.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from dashboard.readers.fields import _has_field, _normalise_key, _unwrap
from dashboard.readers.venues import _YEAR, venue_and_year


def _openreview_flat(note: dict) -> dict[str, Any]:
    """An OpenReview note (API v1 or v2) as a flat record with canonical keys."""
    content = note.get("content") or {}
    flat: dict[str, Any] = {key: _unwrap(value) for key, value in content.items() if isinstance(key, str)}
    note_id = note.get("id") or note.get("forum")
    forum = note.get("forum") or note_id
    out: dict[str, Any] = {
        k: v for k, v in flat.items() if _normalise_key(k) not in ("venue", "venueid", "id")
    }
    if note_id:
        out["id"] = note_id
    if forum and isinstance(forum, str) and not _has_field(out, "url"):
        out["url"] = f"https://openreview.net/forum?id={forum}"
    pdf = flat.get("pdf")
    if isinstance(pdf, str) and pdf.startswith("/"):
        out["pdf"] = f"https://openreview.net{pdf}"
    venue_text = flat.get("venue") if isinstance(flat.get("venue"), str) else ""
    venue_id = flat.get("venueid") or note.get("domain") or ""
    reviews = _official_reviews(note)
    if reviews and not _has_field(out, "ratings"):
        out["ratings"] = [rating for rating, _ in reviews]
        confidences = [confidence for _, confidence in reviews]
        if any(c is not None for c in confidences):  # one per score, or the reader reports the gap
            out["confidences"] = [c for c in confidences if c is not None]
    decision = _reply_decision(note)
    if decision and "decision" not in out:
        out["decision"] = decision
    if venue_text and "decision" not in out:
        out["decision"] = venue_text  # "ICLR 2026 Poster", "Submitted to ICLR 2026", ...
    venue, year = venue_and_year(str(venue_id).replace(".cc", " "), loose=True) if venue_id else ("", None)
    if not venue or year is None:
        venue2, year2 = venue_and_year(venue_text, loose=True) if venue_text else ("", None)
        venue, year = venue or venue2, year if year is not None else year2
    if year is None:
        for stamp in ("pdate", "odate", "cdate", "tcdate"):
            millis = note.get(stamp)
            # milliseconds since 1970; only plausible ones (1990-2100), others would overflow datetime
            if isinstance(millis, (int, float)) and not isinstance(millis, bool) and 6e11 < millis < 4.1e12:
                year = dt.datetime.fromtimestamp(millis / 1000, tz=dt.timezone.utc).year
                break
    out["venue"] = venue
    if "year" not in out and year is not None:
        out["year"] = year
    return out


def _is_openreview_note(record: dict) -> bool:
    content = record.get("content")
    if not isinstance(content, dict):
        return False
    return (
        "forum" in record
        or "invitations" in record
        or "invitation" in record
        or any(isinstance(v, dict) and "value" in v for v in content.values())
    )


def _reply_decision(note: dict) -> str:
    """The decision of a note fetched with ``details=replies`` (v2) or ``directReplies`` (v1)."""
    details = note.get("details")
    if not isinstance(details, dict):
        return ""
    for key in ("replies", "directReplies"):
        replies = details.get(key)
        if not isinstance(replies, list):
            continue
        for reply in replies:
            if not isinstance(reply, dict):
                continue
            invitations = reply.get("invitations") or [reply.get("invitation") or ""]
            if not any(isinstance(i, str) and i.rstrip("/").endswith("Decision") for i in invitations):
                continue
            content = reply.get("content")
            decision = _unwrap(content.get("decision")) if isinstance(content, dict) else None
            if isinstance(decision, str) and decision.strip():
                return decision.strip()
    return ""


# Replies that are not a reviewer's own review, though some carry a "recommendation" or "confidence"
# (an area chair's meta-review, the decision, comments, rebuttals, ethics reviews).
_NOT_REVIEWS = ("meta", "decision", "acceptance", "comment", "rebuttal", "ethic", "withdraw", "revision")


def _official_reviews(note: dict) -> list[tuple[Any, Any]]:
    """(rating, confidence) of each official review among a note's ``details.replies`` (v2) or
    ``directReplies`` (v1), in their order, as written (the reader parses them and reports the rest).

    A review is a reply whose invitation ends in ``Official_Review`` (v1 2018-, v2), ``official/review``
    (ICLR 2017) or ``Review``, and which has a ``rating`` or ``recommendation``; a reply without an
    invitation counts when it has a ``rating`` and no decision or meta-review text.
    """
    details = note.get("details")
    if not isinstance(details, dict):
        return []
    for key in ("replies", "directReplies"):
        replies = details.get(key)
        if not isinstance(replies, list) or not replies:
            continue
        found = []
        for reply in replies:
            if not isinstance(reply, dict) or not isinstance(reply.get("content"), dict):
                continue
            content = reply["content"]
            invitations = reply.get("invitations") or [reply.get("invitation") or ""]
            tails = [
                i.rsplit("/-/", 1)[-1].casefold().replace("/", "_") for i in invitations if isinstance(i, str)
            ]
            named = [t for t in tails if t]
            if named:
                if not any(t.endswith("review") and not any(w in t for w in _NOT_REVIEWS) for t in named):
                    continue
                rating = content.get("rating", content.get("recommendation"))
            else:
                if any(k in content for k in ("decision", "metareview", "meta_review")):
                    continue
                rating = content.get("rating")
            if rating is None:
                continue
            found.append((rating, content.get("confidence")))
        if found:
            return found
    return []


_ARXIV_KEYS = frozenset({"submitter", "authors_parsed", "journal-ref", "versions", "update_date"})


def _is_arxiv_record(record: dict) -> bool:
    """An arXiv metadata snapshot record (``id, submitter, authors, authors_parsed, ... versions``)."""
    return "id" in record and len(_ARXIV_KEYS.intersection(record)) >= 2


def _arxiv_flat(record: dict) -> dict[str, Any]:
    """An arXiv snapshot record with venue ``arXiv`` (unless ``journal-ref`` names a known venue), the
    year of its first version, its categories as keywords and its abstract page as the paper URL."""
    out = {k: v for k, v in record.items() if k not in ("journal-ref", "categories", "versions", "authors")}
    arxiv_id = str(record.get("id") or "").strip()
    journal = record.get("journal-ref")
    venue, venue_year = venue_and_year(journal, loose=False) if isinstance(journal, str) else ("", None)
    out["venue"] = venue or "arXiv"
    year = _first_version_year(record.get("versions"))
    if venue and venue_year is not None:
        year = venue_year
    if year is None:
        year = _year_of(record.get("update_date"))
    if year is not None:
        out["year"] = year
    categories = record.get("categories")
    if isinstance(categories, str):
        out["keywords"] = categories.split()
    out["authors"] = record.get("authors_parsed") or record.get("authors")
    if arxiv_id:
        out["arxiv_id"] = arxiv_id
        out["url"] = f"https://arxiv.org/abs/{arxiv_id}"
        out["pdf_url"] = f"https://arxiv.org/pdf/{arxiv_id}"
    return out


def _first_version_year(versions: Any) -> int | None:
    """The year of ``versions[0].created`` (``"Mon, 2 Apr 2007 19:18:42 GMT"``)."""
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], dict):
        return None
    return _year_of(versions[0].get("created"))


def _year_of(text: Any) -> int | None:
    if not isinstance(text, str):
        return None
    match = _YEAR.search(text)
    return int(match.group()) if match else None


def _is_code_link(record: dict) -> bool:
    """A Papers with Code ``links-between-papers-and-code.json`` record: a repository for a paper."""
    return (
        "repo_url" in record
        and ("paper_url" in record or "paper_arxiv_id" in record)
        and not _has_field(record, "abstract")
    )
