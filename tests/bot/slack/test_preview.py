"""The HTML preview: Slack's layout of the blocks, every piece of text HTML-escaped."""

from __future__ import annotations

from bs4 import BeautifulSoup

from agent.answer import Answer, Citation, Claim
from bot.slack.render.blocks import answer_messages
from bot.slack.render.layout import SlackMessage, actions, button, context, divider, header, section
from bot.slack.render.preview import PreviewThread, preview_html, threads_html


def page(*blocks: dict, text: str = "fallback") -> BeautifulSoup:  # type: ignore[type-arg]
    return BeautifulSoup(
        preview_html([SlackMessage(text=text, blocks=list(blocks))]), "html.parser"
    )


def test_mrkdwn_is_laid_out_as_slack_shows_it() -> None:
    soup = page(
        section(
            "*bold* _italic_ ~struck~ `co*de*` and a snake_case_name\n> quoted\n> twice\nafter"
        ),
        section("```\nfirst <https://x.example/a|link>\n*not bold*```"),
    )
    first, second = soup.select(".section")
    assert [t.name for t in first.find_all(["strong", "em", "del", "code"])] == [
        "strong",
        "em",
        "del",
        "code",
    ]
    assert first.code.get_text() == "co*de*" and "snake_case_name" in first.get_text()
    assert first.blockquote.get_text("|") == "quoted|twice"
    assert second.pre.get_text() == "first link\n*not bold*"
    assert second.pre.a["href"] == "https://x.example/a"


def test_links_mentions_and_entities_render_as_slack_does() -> None:
    soup = page(
        section(
            "<https://docs.example/a?x=1&amp;y=2|Leave &amp; travel> <@U123> <#C9|general> "
            "<!subteam^S1|@experts> &lt;!channel&gt; &amp;lt; <javascript:alert(1)|x>"
        )
    )
    [sect] = soup.select(".section")
    [anchor] = sect.find_all("a")
    assert anchor["href"] == "https://docs.example/a?x=1&y=2"
    assert anchor.get_text() == "Leave & travel"
    assert [m.get_text() for m in sect.select(".mention")] == ["@U123", "#general", "@experts"]
    assert "<!channel> &lt; <javascript:alert(1)|x>" in sect.get_text()


def test_text_that_looks_like_html_is_shown_not_run() -> None:
    soup = page(
        header('<img src=x onerror="alert(1)">'),
        section('&lt;script&gt;alert(1)&lt;/script&gt; <https://x.example/"onmouseover="a|t>'),
        actions([button('"><b>Why</b>', action_id='a"b', value='{"run":1}')]),
        text="<script>alert(2)</script>",
    )
    assert not soup.find_all(["script", "img", "b"])
    assert soup.select_one(".header").get_text() == '<img src=x onerror="alert(1)">'
    assert soup.select_one("button").get_text() == '"><b>Why</b>'
    assert soup.select_one("button")["data-action-id"] == 'a"b'
    [anchor] = soup.select(".section a")
    assert anchor.attrs.keys() == {"href", "target", "rel"}


def test_blocks_of_every_kind_appear_in_order() -> None:
    soup = page(
        header("Title"),
        section("Body"),
        context("small", "print"),
        divider(),
        actions(
            [
                button("Go", action_id="go", value="1", style="primary"),
                button("No", action_id="no", value="2"),
            ]
        ),
    )
    content = soup.select_one(".message.bot .content")
    kinds = [c["class"][0] for c in content.find_all(recursive=False)]
    assert kinds[:6] == ["author", "header", "section", "context", "divider", "actions"]
    assert [b.get_text() for b in soup.select(".actions button")] == ["Go", "No"]
    assert soup.select_one(".actions button")["class"] == ["button", "primary"]


def test_the_page_is_self_contained_and_shows_each_question_with_its_reply() -> None:
    cited = Citation(1, "Leave", "https://docs.example/leave", "leave.md", 1, 1, "hb", "hr")
    answer = Answer(
        "Q?",
        (Claim("Use HRLinks.", "Use HRLinks.", 1, 1),),
        (cited,),
        "enough_evidence",
        False,
        run_id=3,
    )
    html = threads_html(
        [PreviewThread(answer_messages(answer), question="How <b>do</b> I?"), PreviewThread([])],
        title="t <i>",
    )
    soup = BeautifulSoup(html, "html.parser")
    assert soup.title.get_text() == "t <i>"
    assert (
        "default-src 'none'"
        in soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    )
    assert not soup.find_all(["script", "link", "img", "iframe"])
    assert soup.select_one(".message.user .section").get_text() == "How <b>do</b> I?"
    assert "Use HRLinks." in soup.select_one(".message.bot .section").get_text()
    assert len(soup.select(".thread")) == 2


def test_slacks_feedback_buttons_render_at_the_foot_of_an_answer() -> None:
    from bot.slack.render.feedback_buttons import FEEDBACK, feedback_block

    soup = page(section("Body"), feedback_block(run_id=7))
    content = soup.select_one(".message.bot .content")
    kinds = [c["class"][0] for c in content.find_all(recursive=False)]
    assert kinds[-2] == "context-actions"  # the last block, before the fallback text
    found = soup.select(".context-actions button.feedback")
    assert [b.get_text() for b in found] == ["👍", "👎"]
    assert [b["aria-label"] for b in found] == ["This answer helped", "This answer did not help"]
    assert {b["data-action-id"] for b in found} == {FEEDBACK}
