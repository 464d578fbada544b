"""The handbook's Markdown dialect, checked on real pages from bot/sample_kb/handbook/pages."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import pytest

from jobs.documents import FailedDocument, SourceDocument
from jobs.errors import DocumentError
from jobs.formats.markdown import (
    build_alias_map,
    convert_markdown,
    handbook_page_url,
    parse_front_matter,
)

ROOT = "https://handbook.tts.gsa.gov"
Page = Callable[[str], SourceDocument]


def convert(raw: str, *, page_url: str | None = f"{ROOT}/tools/example/", aliases=None):
    return convert_markdown(raw, page_url=page_url, site_root=ROOT, aliases=aliases or {})


def test_a_multi_line_yaml_title_is_read_in_full(handbook_page: Page) -> None:
    page = handbook_page("supervisor-resources/new-supervisor-playbook/play-4.md")

    assert page.title == (
        "Play 4 - Ask questions, then ask more questions; in fact, never stop asking questions!"
    )


def test_the_title_heads_the_text_as_the_page_shows_it(handbook_page: Page) -> None:
    page = handbook_page("travel-and-leave/leave.md")

    assert page.title == "Leave types"
    assert page.text.startswith(
        "# Leave types\n\nCurrent employees can use this [leave comparison chart]"
    )


def test_page_shortcode_becomes_an_absolute_handbook_url(handbook_page: Page) -> None:
    text = handbook_page("travel-and-leave/leave.md").text

    assert (
        "check [out of office expectations]"
        "(https://handbook.tts.gsa.gov/travel-and-leave/going-out-of-office/)" in text
    )


def test_page_shortcode_on_a_redirect_alias_points_at_the_canonical_page(
    handbook_page: Page,
) -> None:
    # glossary.md links {% page "/software/" %}; software.md has redirect_from: /software/
    text = handbook_page("general-information-and-resources/glossary.md").text

    assert (
        "[Here's how to get software]"
        "(https://handbook.tts.gsa.gov/general-information-and-resources/software/)" in text
    )


def test_page_shortcode_keeps_its_anchor_and_collapses_double_slashes(handbook_page: Page) -> None:
    # The source writes {% page "/travel-and-leave/overtime//#religious-comp-time-for-everyone" %}
    text = handbook_page("travel-and-leave/leave.md").text

    assert "(https://handbook.tts.gsa.gov/travel-and-leave/overtime/#religious-comp-time" in text


def test_slack_channel_shortcode_becomes_a_channel_link(handbook_page: Page) -> None:
    text = handbook_page("18f/chapters/engineering.md").text

    assert "[#infrastructure](https://gsa-tts.slack.com/channels/infrastructure)" in text


def test_slack_channel_shortcode_uses_its_display_text(handbook_page: Page) -> None:
    page = handbook_page(
        "general-information-and-resources/employee-resources-policies/veterans-service-members.md"
    )

    assert (
        "TTS has a Veterans [Vets](https://gsa-tts.slack.com/channels/vets) Slack channel."
        in page.text
    )


def test_alert_keeps_its_heading_and_body_as_paragraphs(handbook_page: Page) -> None:
    text = handbook_page("tools/git-signing.md").text

    assert (
        "\n\nAbout the cryptographic algorithm\n\nWe recommend using the ED25519 algorithm" in text
    )
    assert "Re-adding the keys after a restart\n\nYou may need to re-add your SSH keys" in text
    assert "alert" not in text


def test_images_downloads_and_includes_are_dropped(handbook_page: Page) -> None:
    leading = handbook_page("18f/projects-partners/leading-projects.md").text
    calendar = handbook_page("tools/google-calendar.md").text
    concur = handbook_page(
        "travel-and-leave/travel-and-leave-policies/first-time-travel-get-in-concur.md"
    ).text

    assert "- Hold an [internal kickoff](https://docs.google.com/document/d/" in leading
    assert "download" not in leading.lower()
    assert "_img/" not in calendar and "border-base-light" not in calendar
    assert "step-indicator" not in concur and "current_step" not in concur
    assert "they may request that you complete the EFT form and will provide" in concur


def test_an_html_table_becomes_one_pipe_joined_line_per_row(handbook_page: Page) -> None:
    text = handbook_page("general-information-and-resources/chicago.md").text

    assert "\nSlack channel | [#chitown](https://gsa-tts.slack.com/channels/chitown)\n" in text
    assert (
        "\nRegion | Great Lakes Region ([Region 5](https://www.gsa.gov/about-us/gsa-regions))\n"
        in text
    )
    assert "<t" not in text


def test_an_email_autolink_keeps_the_address(handbook_page: Page) -> None:
    text = handbook_page("training-and-development/pra-for-user-research.md").text

    assert "feedback on this information at tts-research@gsa.gov." in text
    assert "(privacy.office@gsa.gov)" in text
    assert "<tts-research@gsa.gov>" not in text


def test_a_mailto_autolink_keeps_the_address_without_the_scheme(handbook_page: Page) -> None:
    text = handbook_page("general-information-and-resources/san-francisco.md").text

    assert "please email peter.rowland@gsa.gov." in text


def test_jekyll_base_url_variables_are_removed(handbook_page: Page) -> None:
    lifecycle = handbook_page("18f/how-18f-works/project-lifecycle.md").text
    product = handbook_page("18f/chapters/product.md").text

    assert (
        "[interagency agreement (IAA)](https://handbook.tts.gsa.gov/18f/how-18f-works/agreements/)"
        in lifecycle
    )
    assert (
        "[Software](https://handbook.tts.gsa.gov/general-information-and-resources/software/)"
        in product
    )
    assert "base_url" not in lifecycle and "baseurl" not in product


def test_relative_links_resolve_against_the_page_url(handbook_page: Page) -> None:
    text = handbook_page("performance-management/mid-year.md").text

    assert "See [dates](https://handbook.tts.gsa.gov/performance-management/dates/#mid-year" in text
    assert "](../" not in text


def test_markdown_it_attrs_are_dropped(handbook_page: Page) -> None:
    text = handbook_page("launching-software/lifecycle.md").text

    assert "[Learn about ATOs](https://atos.open-control.org/)" in text
    assert "usa-button" not in text


def test_details_become_the_summary_then_the_body(handbook_page: Page) -> None:
    text = handbook_page("general-information-and-resources/collaboration-tools.md").text

    assert (
        "\n\nCompliance and records considerations\n\n"
        "- Slack is ATO'd for use in GSA, and has a FedRAMP Agency Authorization" in text
    )


def test_accordion_buttons_become_headings(handbook_page: Page) -> None:
    text = handbook_page("training-and-development/external-speaking-request-playbook.md").text

    assert "\n### Step 1: Join the TTS Speaker’s Bureau\n\nIf you want to represent TTS" in text


def test_bold_markers_are_removed(handbook_page: Page) -> None:
    text = handbook_page("training-and-development/external-speaking-request-playbook.md").text

    assert text.startswith("# External speaking request playbook\n\nIf this is a press request")
    assert "forward the request to press@gsa.gov and do not" in text


def test_questions_front_matter_becomes_a_final_questions_section(handbook_page: Page) -> None:
    page = handbook_page("travel-and-leave/travel-and-leave-policies/travel-guide-faq.md")

    assert page.text.endswith(
        "# Questions?\n\n"
        "- [#travel](https://gsa-tts.slack.com/channels/travel)\n"
        "- tts-travel@gsa.gov\n"
        "- [Book office hours](https://calendar.google.com/calendar/u/0/selfsched?"
        "cid=ZGplbWlsYS5tY2NyYXlAZ3NhLmdvdg)"
    )
    assert page.metadata["questions"][0] == {
        "text": "#travel",
        "url": "https://gsa-tts.slack.com/channels/travel",
    }
    assert page.metadata["questions"][1] == {
        "text": "tts-travel@gsa.gov",
        "url": "mailto:tts-travel@gsa.gov",
    }


def test_keywords_and_redirects_go_into_metadata(handbook_page: Page) -> None:
    page = handbook_page("travel-and-leave/leave.md")

    assert page.metadata["keywords"][:3] == ["hrlinks", "hr links", "vacation"]
    assert page.metadata["redirect_from"] == ["/leave/"]
    assert page.metadata["path"] == "pages/travel-and-leave/leave.md"
    assert page.metadata["format"] == "markdown"


def test_page_url_drops_the_pages_folder_and_the_extension(handbook_page: Page) -> None:
    assert handbook_page("travel-and-leave/leave.md").url == f"{ROOT}/travel-and-leave/leave/"
    assert (
        handbook_page(
            "general-information-and-resources/employee-resources-policies/work-schedules.md"
        ).url
        == f"{ROOT}/general-information-and-resources/employee-resources-policies/work-schedules/"
    )


def test_page_url_of_an_index_page_is_its_folder(handbook_page: Page) -> None:
    assert handbook_page("getting-started/index.md").url == f"{ROOT}/getting-started/"
    assert handbook_page("getting-started/classes.md").url == f"{ROOT}/getting-started/classes/"


def test_page_url_uses_the_permalink_when_there_is_one() -> None:
    url = handbook_page_url(
        "pages/performance-management/index.md", site_root=ROOT, permalink="/Perf-Mgmt/"
    )

    assert url == f"{ROOT}/Perf-Mgmt/"


def test_a_permalink_page_keeps_its_permalink(handbook_page: Page) -> None:
    page = handbook_page("performance-management/index.md")

    assert page.url == f"{ROOT}/performance-management/"
    assert page.metadata["permalink"] == "/performance-management/"


def test_alias_map_sends_aliases_and_slashless_paths_to_canonical_pages() -> None:
    aliases = build_alias_map(
        [(f"{ROOT}/travel-and-leave/leave/", ["/leave/"]), (f"{ROOT}/tools/zoom/", [])],
        site_root=ROOT,
    )
    text = convert("[a](/leave) [b](/tools/zoom#x) [c]({% page 'leave/' %})", aliases=aliases).text

    assert text == (
        f"[a]({ROOT}/travel-and-leave/leave/) [b]({ROOT}/tools/zoom/#x) "
        f"[c]({ROOT}/travel-and-leave/leave/)"
    )


def test_raw_blocks_keep_their_content_and_lose_their_markers() -> None:
    text = convert("Write {% raw %}{{ site.name }} and {% page '/x/' %}{% endraw %} here.").text

    assert text == "Write {{ site.name }} and {% page '/x/' %} here."


def test_link_shortcode_becomes_its_url() -> None:
    text = convert(
        '[KeePassXC]({% link "https://keepassxc.org/" %}) and [home]({%link "/" %})'
    ).text

    assert text == f"[KeePassXC](https://keepassxc.org/) and [home]({ROOT}/)"


def test_br_becomes_a_newline_and_no_tags_remain() -> None:
    text = convert("First line<br>second line<br/> third <span>line</span>").text

    assert text == "First line\nsecond line\nthird line"


def test_code_blocks_stay_fenced_and_verbatim() -> None:
    text = convert("Run:\n\n```sh\nmake  test\n# then\n```\n").text

    assert text == "Run:\n\n```\nmake  test\n# then\n```"


def test_without_a_page_url_relative_links_keep_only_their_text() -> None:
    text = convert("See [the dates](../dates/).", page_url=None).text

    assert text == "See the dates."


def test_a_title_falls_back_to_the_first_heading() -> None:
    converted = convert("# Team norms\n\nBe kind.")

    assert converted.title == "Team norms"


def test_malformed_front_matter_is_an_error_with_the_line() -> None:
    with pytest.raises(DocumentError) as raised:
        parse_front_matter("---\ntitle: [unclosed\nkeywords: a\n---\nBody\n")

    assert raised.value.reason.startswith("front matter is not valid YAML")
    assert "fix the block between the --- lines" in raised.value.reason


def test_front_matter_that_is_not_a_mapping_is_an_error() -> None:
    with pytest.raises(DocumentError, match="not a YAML mapping"):
        parse_front_matter("---\n- just\n- a list\n---\nBody\n")


def test_the_whole_handbook_loads_cleanly(
    handbook_items: list[SourceDocument | FailedDocument],
) -> None:
    failures = [item for item in handbook_items if isinstance(item, FailedDocument)]
    documents = [item for item in handbook_items if isinstance(item, SourceDocument)]

    assert failures == []
    assert len(documents) == 199
    assert all(document.uri.startswith("pages/") for document in documents)
    for document in documents:
        leftovers = [marker for marker in ("{%", "{{", "<table", "<div") if marker in document.text]
        assert leftovers == [], document.uri
        assert document.title and document.url and document.text, document.uri
        assert "\n\n\n" not in document.text, document.uri
        assert not re.search(r"[ \t]$", document.text, re.M), document.uri
        assert unicodedata.is_normalized("NFC", document.text), document.uri


def test_inline_html_in_a_title_becomes_plain_text(handbook_page: Page) -> None:
    page = handbook_page(
        "travel-and-leave/travel-and-leave-policies/first-time-travel-get-in-concur-pre-olu.md"
    )

    assert page.title == "Get set up to travel for TTS before GSA onboarding"


def test_slack_channels_link_only_into_a_configured_workspace() -> None:
    raw = '---\nquestions:\n  - leave\n---\n\nAsk in {% slack_channel "leave" %}.\n'

    plain = convert_markdown(raw, page_url=None, site_root=None, aliases={})
    linked = convert_markdown(
        raw, page_url=None, site_root=None, aliases={}, slack_workspace_url="https://t.slack.com/"
    )

    assert plain.text == "Ask in #leave.\n\n# Questions?\n\n- #leave"
    assert plain.metadata["questions"] == [{"text": "#leave", "url": None}]
    assert linked.text.startswith("Ask in [#leave](https://t.slack.com/channels/leave).")
