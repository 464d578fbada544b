"""BM25 keyword search: the analyzer, rank-bm25 parity, and the Postgres-backed index."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from store.corpus import CorpusReader
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.filters import ChunkFilter
from store.keyword_search import KeywordOptions, KeywordSearch, ranking
from store.keyword_search.bm25 import Bm25Index, Bm25Parameters
from store.keyword_search.live import Bm25Statistics, LiveBm25, document_frequencies
from store.keyword_search.pairs import PairIndex, PairVocabulary, pair_occurrences, query_pairs
from store.keyword_search.segmented import ChunkColumns, Segment, SegmentedIndex, SegmentPolicy
from store.keyword_search.segments import Postings
from store.keyword_search.terms import BREAK, TermSequences, Vocabulary, grouped
from store.text_analysis import TextAnalyzer

CORPUS = [
    "The leave policy says staff request annual leave in the HR portal.",
    "Travel must be booked through the travel agent; receipts are reimbursed.",
    "Deploys fail with error_code_42 when the cache is cold; retry the deploy.",
    "Version v2.3 of the API removed the legacy endpoints.",
    "The staff handbook covers leave, travel and equipment for new staff.",
    "Running the test suite: the runner runs tests in parallel.",
    "Equipment such as laptops is requested from the IT team.",
    "",
]


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return TextAnalyzer()


def test_identifiers_survive_whole_and_as_words(analyzer: TextAnalyzer) -> None:
    terms = analyzer.terms("Deploy failed: Error_Code_42 in v2.3")
    assert "error_code_42" in terms
    assert "v2.3" in terms
    assert {"error", "code", "42"} <= set(terms)


def test_words_are_lower_cased_and_stemmed(analyzer: TextAnalyzer) -> None:
    assert analyzer.terms("Running RUNS run") == ["run", "run", "run"]
    assert analyzer.terms("studies") == analyzer.terms("study")


def test_stop_words_are_dropped(analyzer: TextAnalyzer) -> None:
    assert analyzer.terms("What is the policy of the team?") == ["polici", "team"]


def test_hyphenated_words_split_without_a_whole_term(analyzer: TextAnalyzer) -> None:
    assert analyzer.terms("state-of-the-art") == ["state", "art"]
    assert "covid-19" in analyzer.terms("COVID-19 cases")


def test_an_initialism_with_dots_is_the_word_without_them(analyzer: TextAnalyzer) -> None:
    assert analyzer.terms("Washington, D.C.") == analyzer.terms("Washington DC")
    assert analyzer.terms("the U.K. office") == ["uk", "offic"]
    # "U.S." is the stop word "us", as "US" is; a version or a hyphenated word is no initialism.
    assert analyzer.terms("U.S. staff") == analyzer.terms("US staff") == ["staff"]
    assert "v2.3" in analyzer.terms("v2.3")
    assert analyzer.terms("x-ray") == ["ray"]


def test_a_titles_words_are_its_camel_case_parts_stemmed(analyzer: TextAnalyzer) -> None:
    assert analyzer.title_words("TTSJobs") == {"tts", "job"}
    assert analyzer.title_words("HRLinks and iPhone") == {"hr", "link", "phone"}
    # Words in one case, or only capitalised, are one word as before.
    assert analyzer.title_words("Hiring USA hiring") == {"hire", "usa"}


def test_words_come_in_reading_order_and_identifiers_apart(analyzer: TextAnalyzer) -> None:
    analysed = analyzer.analyse("Deploy failed: Error_Code_42 in v2.3")
    assert analysed.words == ["deploy", "fail", "error", "code", "42", "v2", "3"]
    assert analysed.identifiers == ["error_code_42", "v2.3"]
    assert analysed.terms == analyzer.terms("Deploy failed: Error_Code_42 in v2.3")


@pytest.mark.parametrize(
    "query",
    [
        "staff request annual leave",
        "leave travel, leave travel",  # a repeated pair counts twice
        "annual staff",  # both words are known, the pair is not
        "quantum entanglement",
    ],
)
def test_word_pair_scores_equal_rank_bm25_over_pair_tokens(
    analyzer: TextAnalyzer, query: str
) -> None:
    words = [analyzer.analyse(text).words for text in CORPUS]
    vocabulary = Vocabulary()
    pairs = PairIndex.build(TermSequences.of([vocabulary.ids(w) for w in words]))
    reference = BM25Okapi([_pair_tokens(w) for w in words])
    query_words = analyzer.analyse(query).words
    ours = pairs.index.scores(pairs.query(vocabulary.known_ids(query_words)))
    expected = reference.get_scores(_pair_tokens(query_words))
    assert np.allclose(ours, expected, rtol=1e-5, atol=1e-6)
    assert (ours > 0).any() == (
        query in ("staff request annual leave", "leave travel, leave travel")
    )


def test_term_sequences_index_like_term_counts(analyzer: TextAnalyzer) -> None:
    documents = analyzer.terms_of_all(CORPUS)
    vocabulary = Vocabulary()
    encoded = [vocabulary.encode(terms) for terms in documents]
    # The same terms as sequences, cut into runs by BREAKs, which only pairs heed.
    runs = [np.insert(vocabulary.ids(terms), len(terms) // 2, BREAK) for terms in documents]
    sequences = TermSequences.of(runs)
    counted = Bm25Index.build(encoded, vocabulary_size=len(vocabulary))
    sequenced = Bm25Index.from_sequences(sequences, vocabulary_size=len(vocabulary))
    for query in ("staff leave", "error_code_42 deploy deploy", "v2.3 endpoints"):
        terms = vocabulary.lookup(analyzer.terms(query))
        assert np.allclose(sequenced.scores(terms), counted.scores(terms))
    pairs = PairIndex.build(sequences)
    assert len(pairs.index.documents) == len(  # each BREAK cuts one pair
        {
            (d, a, b)
            for d, t in enumerate(runs)
            for a, b in itertools.pairwise(t)
            if BREAK not in (a, b)
        }
    )


def test_word_ids_newer_than_a_pair_index_match_nothing_there() -> None:
    # Ids 1 and 2 pack into key 1 × 3 + 2 = 5; so would (0, 5) without the width check.
    # Words the vocabulary learnt after the index was built have such ids.
    pairs = PairIndex.build(TermSequences.of([np.array([1, 2]), np.array([0])]))
    assert pairs.width == 3 and pairs.query(np.array([1, 2])) == {0: 1}
    assert pairs.query(np.array([0, 5])) == {}
    assert pairs.query(np.array([-1, 2])) == {}  # a word the vocabulary never saw


def test_grouping_falls_back_to_a_two_key_sort_when_packed_keys_would_overflow() -> None:
    rng = np.random.default_rng(7)
    major, minor = rng.integers(0, 50, 500), rng.integers(0, 9, 500)
    packed = grouped(major, minor, 10)
    # A minor range this wide cannot be packed into int64 keys beside any major.
    unpacked = grouped(major, minor, 2**62)
    for a, b in zip(packed, unpacked, strict=True):
        assert np.array_equal(a, b)
    assert packed[2].sum() == 500 and len(packed[0]) == len(set(zip(major, minor, strict=True)))


def _pair_tokens(words: list[str]) -> list[str]:
    return [f"{a} {b}" for a, b in itertools.pairwise(words)]


def _index(analyzer: TextAnalyzer) -> tuple[Bm25Index, Vocabulary, BM25Okapi]:
    documents = analyzer.terms_of_all(CORPUS)
    vocabulary = Vocabulary()
    encoded = [vocabulary.encode(terms) for terms in documents]
    index = Bm25Index.build(encoded, vocabulary_size=len(vocabulary))
    return index, vocabulary, BM25Okapi(documents)


@pytest.mark.parametrize(
    "query",
    [
        "staff leave",  # "staff" is in fewer than half the documents
        "the staff request leave for travel",
        "error_code_42 deploy deploy",  # a repeated query term counts twice
        "v2.3 endpoints",
        "quantum entanglement",  # unknown terms score nothing
    ],
)
def test_scores_equal_rank_bm25(analyzer: TextAnalyzer, query: str) -> None:
    index, vocabulary, reference = _index(analyzer)
    terms = analyzer.terms(query)
    ours = index.scores(vocabulary.lookup(terms))
    assert np.allclose(ours, reference.get_scores(terms), rtol=1e-5, atol=1e-6)


def test_a_term_in_most_documents_gets_the_epsilon_idf(analyzer: TextAnalyzer) -> None:
    documents = [["common", "x"], ["common", "y"], ["common", "z"], ["rare"]]
    vocabulary = Vocabulary()
    index = Bm25Index.build(
        [vocabulary.encode(d) for d in documents], vocabulary_size=len(vocabulary)
    )
    reference = BM25Okapi(documents)
    ours = index.scores(vocabulary.lookup(["common"]))
    assert np.allclose(ours, reference.get_scores(["common"]), rtol=1e-5)
    assert ours[0] > 0


def test_top_ranks_like_rank_bm25_and_honours_the_mask(analyzer: TextAnalyzer) -> None:
    index, vocabulary, reference = _index(analyzer)
    terms = analyzer.terms("staff leave travel equipment")
    expected = np.argsort(-reference.get_scores(terms), kind="stable")
    top = index.top(vocabulary.lookup(terms), limit=3)
    assert [i for i, _ in top] == [int(i) for i in expected[:3]]
    allowed = np.zeros(len(CORPUS), dtype=bool)
    allowed[6] = True
    assert [i for i, _ in index.top(vocabulary.lookup(terms), limit=3, allowed=allowed)] == [6]


# --- segments, scored lazily ----------------------------------------------------------


def _segment_of(documents: list[list[str]], first_id: int, vocabulary: Vocabulary) -> Segment:
    sequences = TermSequences.of([vocabulary.ids(d) for d in documents])
    ids = np.arange(first_id, first_id + len(documents), dtype=np.int64)
    columns = ChunkColumns(
        ids, ids, np.zeros(len(ids), np.int64), np.zeros(len(ids)), np.zeros(len(ids), np.int64)
    )
    words = Postings.build(sequences.terms, sequences.owner, sequences.size)
    return Segment(columns, words, None)


def _live_scores(index: SegmentedIndex, vocabulary: Vocabulary, terms: list[str]) -> dict:
    scores = index.words.scores(vocabulary.lookup(terms))
    live = np.flatnonzero(index.alive)
    return dict(zip(index.columns.chunk_ids[live].tolist(), scores[live].tolist(), strict=True))


def test_segments_score_like_rank_bm25_over_the_live_documents(analyzer: TextAnalyzer) -> None:
    documents = analyzer.terms_of_all(CORPUS)
    # "common" is in most live documents at the end: its idf is the epsilon floor.
    documents = [[*d, "common"] for d in documents[:6]] + documents[6:]
    vocabulary, parameters = Vocabulary(), Bm25Parameters()
    first = _segment_of(documents[:4], 0, vocabulary)
    second = _segment_of(documents[4:], 4, vocabulary)
    index = SegmentedIndex.of(
        [first, second], vocabulary_sizes=(len(vocabulary), 0), parameters=parameters,
        with_pairs=False,
    )  # fmt: skip
    added = [["staff", "leav", "new"], ["common", "deploy", "deploy"]]
    changed = index.with_changes(
        removed_documents=np.array([1, 6]),
        added=_segment_of(added, 8, vocabulary),
        vocabulary_sizes=(len(vocabulary), 0),
    )
    merged = changed.merge_small(SegmentPolicy(small=100, fanout=2))
    assert merged is not None and len(merged.segments) == 1 and merged.size == 8
    # No segment is small here; the two with a quarter masked are rewritten without it.
    compacted = changed.merge_small(SegmentPolicy(small=1, fanout=9, masked=0.25))
    assert compacted is not None and len(compacted.segments) == 2 and compacted.size == 8
    assert changed.merge_small(SegmentPolicy(small=1, fanout=9, masked=0.3)) is None
    live = {i: d for i, d in enumerate(documents) if i not in (1, 6)} | {8: added[0], 9: added[1]}
    reference = BM25Okapi(list(live.values()))
    for query in ("staff leave", "common deploy", "error_code_42 deploy", "quantum"):
        terms = analyzer.terms(query) or ["quantum"]
        expected = dict(zip(live, reference.get_scores(terms).tolist(), strict=True))
        for state in (changed, merged, compacted):
            ours = _live_scores(state, vocabulary, terms)
            assert ours.keys() == expected.keys()
            assert np.allclose([ours[i] for i in live], [expected[i] for i in live], rtol=1e-5)
    # The masked documents score nothing even where their terms match.
    assert changed.words.statistics.chunks == 8 and not changed.alive[[1, 6]].any()


def test_the_best_of_every_position_are_found_among_few_candidates() -> None:
    rng = np.random.default_rng(7)
    size = 20 * ranking.BLOCK + 3  # a ragged last block
    dense = np.where(rng.random(size) < 0.3, rng.integers(1, 40, size) / 4, 0.0)
    ids = rng.permutation(size).astype(np.int64)  # many ties: ranked by chunk id
    positive = np.flatnonzero(dense)
    for limit in (1, 5, 100, len(positive) + 10):
        pairs = zip(ids[positive].tolist(), dense[positive].tolist(), strict=True)
        expected = sorted(pairs, key=lambda p: (-p[1], p[0]))
        chosen = ranking.candidates(dense, limit)
        assert len(chosen) <= len(positive)
        assert ranking.best(ids[chosen], dense[chosen], limit) == expected[:limit]
    assert ranking.best(ids[positive], dense[positive], 7) == expected[:7]
    matched = ranking.Distribution.of(dense)
    assert matched.count == len(positive)
    assert (matched.mean, matched.spread) == pytest.approx(
        (dense[positive].mean(), dense[positive].std())
    )


def test_postings_summed_sparsely_add_up_as_over_every_position() -> None:
    positions = np.array([9, 2, 9, 5, 2, 9])
    weights = np.array([0.5, 1.0, 0.25, 2.0, 0.5, 1.0])
    distinct, sums = ranking.summed(positions, weights)
    dense = np.bincount(positions, weights)
    assert distinct.tolist() == np.flatnonzero(dense).tolist() == [2, 5, 9]
    assert sums.tolist() == dense[distinct].tolist()


def test_pairs_as_dense_terms_score_like_the_eager_pair_index(analyzer: TextAnalyzer) -> None:
    vocabulary, pair_ids = Vocabulary(), PairVocabulary()
    words = [vocabulary.ids(analyzer.analyse(t).words) for t in CORPUS]
    runs = [np.insert(w, min(2, len(w)), BREAK) for w in words]  # no pair across a BREAK
    sequences = TermSequences.of(runs)
    eager = PairIndex.build(sequences)
    keys, owner = pair_occurrences(sequences)
    postings = Postings.build(pair_ids.ids(keys), owner, sequences.size)
    df = document_frequencies([(postings, np.ones(len(CORPUS), bool))], len(pair_ids))
    lengths = int(postings.lengths.sum())
    statistics = Bm25Statistics.of(
        chunks=len(CORPUS), total_length=lengths, df=df, parameters=Bm25Parameters()
    )
    live = LiveBm25.over([postings], statistics, Bm25Parameters())
    for query in ("staff request annual leave", "leave travel, leave travel", "annual staff"):
        ids = vocabulary.known_ids(analyzer.analyse(query).words)
        ours = live.scores(pair_ids.known(query_pairs(ids)))
        assert np.allclose(ours, eager.index.scores(eager.query(ids)), rtol=1e-5, atol=1e-6)
    assert pair_ids.ids(keys[:3]).tolist() == pair_ids.ids(keys[:3]).tolist()  # ids are fixed


def test_postings_list_the_terms_of_the_chunks_asked_for() -> None:
    postings = Postings.build(np.array([5, 3, 5, 3, 9]), np.array([0, 0, 0, 1, 2]), 3)
    assert postings.terms.tolist() == [3, 5, 9] and postings.tf.tolist() == [1, 1, 2, 1]
    assert sorted(postings.terms_of(np.array([0])).tolist()) == [3, 5]
    assert sorted(postings.terms_of(np.array([1, 2])).tolist()) == [3, 9]
    assert postings.lengths.tolist() == [3, 1, 1]


# --- against Postgres -------------------------------------------------------------------

DIM = 4


async def _store(
    repo: DocumentRepository,
    source: str,
    uri: str,
    title: str,
    paragraphs: list[str],
    *,
    collection: str = "default",
    updated: datetime | None = None,
) -> None:
    source_id = await repo.ensure_source(name=source, kind="test", collection=collection)
    text = "\n\n".join(paragraphs)
    chunks, start = [], 0
    for ordinal, paragraph in enumerate(paragraphs):
        chunks.append(
            ChunkRecord(
                ordinal,
                paragraph,
                f"{uri}-{ordinal}-{hash(paragraph)}",
                start,
                start + len(paragraph),
                (),
                np.ones(DIM, dtype=np.float32) / 2,
            )
        )
        start += len(paragraph) + 2
    document = DocumentRecord(
        uri, title, None, text, f"c-{hash(text)}", f"m-{title}", source_updated_at=updated
    )
    await repo.replace_document(source_id=source_id, document=document, chunks=chunks)


@pytest.fixture
async def repo(pool: asyncpg.Pool) -> DocumentRepository:
    repository = DocumentRepository(pool)
    await repository.adopt_model(ModelIdentity("test-fixed", DIM))
    await _store(repository, "handbook", "leave.md", "Leave", [CORPUS[0], CORPUS[4]])
    await _store(repository, "handbook", "travel.md", "Travel", [CORPUS[1]])
    await _store(
        repository,
        "runbooks",
        "deploy.md",
        "Deploy failures",
        [CORPUS[2], CORPUS[3]],
        collection="engineering",
        updated=datetime(2024, 5, 1, tzinfo=UTC),
    )
    return repository


@pytest.fixture
async def keyword(pool: asyncpg.Pool, repo: DocumentRepository) -> AsyncIterator[KeywordSearch]:
    search = KeywordSearch(CorpusReader(pool), options=KeywordOptions(serve_stale=False))
    yield search
    await search.close()


async def test_rarity_weighs_a_term_by_how_few_chunks_hold_it(keyword: KeywordSearch) -> None:
    await keyword.search("leave")  # builds the snapshot the weights come from
    stored = [CORPUS[i] for i in (0, 4, 1, 2, 3)]  # the chunks the repo fixture holds
    analyzer = TextAnalyzer()
    chunk_terms = [set(analyzer.terms(text)) for text in stored]
    vocabulary = sorted(set().union(*chunk_terms))

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from([*vocabulary, "quantum", "zzyzx"]), min_size=1))
    def weights_follow_chunk_counts(terms: list[str]) -> None:
        weights = keyword.rarity(terms)
        assert set(weights) == set(terms) and min(weights.values()) >= 0.25
        held = {t: sum(t in c for c in chunk_terms) for t in terms}
        assert keyword.known(terms) == {t for t in terms if held[t]}
        for a, b in itertools.product(terms, repeat=2):
            if held[a] < held[b]:  # rarer in the knowledge base: never weighs less
                assert weights[a] >= weights[b]
                if held[a] <= 1:  # in at most one chunk of five: it tells, so it weighs more
                    assert weights[a] > weights[b]
            assert keyword.rarity([a])[a] == weights[a]  # alone or among others

    weights_follow_chunk_counts()


async def test_search_finds_an_identifier_and_returns_the_chunk(keyword: KeywordSearch) -> None:
    hits = await keyword.search("what does error_code_42 mean?", limit=3)
    assert hits[0].text == CORPUS[2]
    assert (hits[0].title, hits[0].source, hits[0].ordinal) == ("Deploy failures", "runbooks", 0)
    assert hits[0].score > 0


async def test_document_titles_are_searchable(keyword: KeywordSearch) -> None:
    # "failures" is only in the title of deploy.md; both of its chunks match.
    hits = await keyword.search("failures", limit=5)
    assert {h.uri for h in hits} == {"deploy.md"}
    assert len(hits) == 2


async def test_filters_by_source_collection_and_update_time(keyword: KeywordSearch) -> None:
    query = "staff leave travel deploy API"
    in_handbook = await keyword.search(query, where=ChunkFilter(sources=["handbook"]))
    assert {h.source for h in in_handbook} == {"handbook"}
    in_engineering = await keyword.search(query, where=ChunkFilter(collections=["engineering"]))
    assert {h.uri for h in in_engineering} == {"deploy.md"}
    outside = await keyword.search(query, where=ChunkFilter(excluded_collections=["engineering"]))
    assert outside and "deploy.md" not in {h.uri for h in outside}
    both = ChunkFilter(collections=["engineering"], excluded_collections=["engineering"])
    assert await keyword.search(query, where=both) == []
    old = await keyword.search(
        query, where=ChunkFilter(updated_before=datetime(2025, 1, 1, tzinfo=UTC))
    )
    assert {h.uri for h in old} == {"deploy.md"}
    recent = await keyword.search(
        query, where=ChunkFilter(updated_after=datetime(2025, 1, 1, tzinfo=UTC))
    )
    assert "deploy.md" not in {h.uri for h in recent}


async def test_a_scored_search_reports_the_spread_of_every_allowed_match(
    keyword: KeywordSearch,
) -> None:
    terms = keyword.analyzer.terms("staff leave travel deploy API")
    everything = await keyword.search_scored(terms, limit=2)
    handbook = await keyword.search_scored(terms, limit=2, where=ChunkFilter(sources=["handbook"]))
    assert len(everything.top) == 2 and everything.matched > 2
    assert 0 < handbook.matched < everything.matched
    # The distribution covers every match (not just the top 2), filters applied.
    all_scores = [s for _, s in (await keyword.search_scored(terms, limit=100)).top]
    assert len(all_scores) == everything.matched
    assert everything.mean == pytest.approx(np.mean(all_scores))
    assert everything.spread == pytest.approx(np.std(all_scores))
    assert (await keyword.search_scored([], limit=2)).matched == 0


async def test_postings_summed_sparsely_or_over_every_chunk_rank_the_same(
    keyword: KeywordSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["staff leave travel deploy API", "leave and travel", "error_code_42"]
    filters = [ChunkFilter(), ChunkFilter(sources=["handbook"])]
    found = {}
    for share in (0, 10**9):  # every query summed sparsely; every query summed densely
        monkeypatch.setattr(ranking, "SPARSE_SHARE", share)
        for query, where in itertools.product(queries, filters):
            analysed = keyword.analyzer.analyse(query)
            terms = await keyword.search_scored(analysed.terms, limit=2, where=where)
            pairs = await keyword.search_pairs(analysed.words, limit=2, where=where)
            found.setdefault(share, []).append((terms, pairs))
    for (terms, pairs), (dense_terms, dense_pairs) in zip(found[0], found[10**9], strict=True):
        assert (terms.top, terms.matched, pairs) == (
            dense_terms.top,
            dense_terms.matched,
            dense_pairs,
        )
        assert (terms.mean, terms.spread) == pytest.approx((dense_terms.mean, dense_terms.spread))
    assert any(terms.matched > 2 for terms, _ in found[0])


async def _pair_hits(
    keyword: KeywordSearch, pool: asyncpg.Pool, query: str, **kwargs: object
) -> list[str]:
    found = await keyword.search_pairs(keyword.analyzer.analyse(query).words, **kwargs)  # type: ignore[arg-type]
    return [h.text for h in await CorpusReader(pool).hits(found)]


async def test_word_pairs_find_the_chunk_with_the_words_side_by_side(
    keyword: KeywordSearch, pool: asyncpg.Pool
) -> None:
    # CORPUS[4] says "leave, travel"; CORPUS[0] and [1] have one of the words each.
    assert await _pair_hits(keyword, pool, "leave and travel") == [CORPUS[4]]
    terms = keyword.analyzer.terms("leave and travel")
    assert len((await keyword.search_scored(terms, limit=10)).top) > 1
    runbooks = ChunkFilter(sources=["runbooks"])
    assert await _pair_hits(keyword, pool, "leave and travel", where=runbooks) == []
    assert await _pair_hits(keyword, pool, "travel") == []  # one word has no pairs


async def test_word_pairs_do_not_span_the_title_and_the_text(
    keyword: KeywordSearch, pool: asyncpg.Pool
) -> None:
    # deploy.md is titled "Deploy failures" and its first chunk starts "Deploys fail".
    found = await _pair_hits(keyword, pool, "deploy failures")  # both chunks, by the title
    assert sorted(found) == sorted([CORPUS[2], CORPUS[3]])
    assert await _pair_hits(keyword, pool, "failures deploys") == []


async def test_word_pairs_can_be_left_out(pool: asyncpg.Pool, repo: DocumentRepository) -> None:
    search = KeywordSearch(CorpusReader(pool), options=KeywordOptions(word_pairs=False))
    try:
        assert await _pair_hits(search, pool, "leave and travel") == []
        assert await search.search("leave and travel")
    finally:
        await search.close()


async def test_a_reindex_is_seen_and_only_new_chunks_are_analysed(
    keyword: KeywordSearch, repo: DocumentRepository
) -> None:
    assert await keyword.search("laptops") == []
    assert keyword.last_build is not None and keyword.last_build.analysed == 5
    await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
    hits = await keyword.search("laptops")
    assert [h.uri for h in hits] == ["equipment.md"]
    assert (keyword.last_build.chunks, keyword.last_build.analysed) == (6, 1)


async def test_a_title_only_change_is_reanalysed(
    keyword: KeywordSearch, repo: DocumentRepository
) -> None:
    assert await keyword.search("expenses") == []
    source_id = await repo.ensure_source(name="handbook", kind="test")
    renamed = DocumentRecord("travel.md", "Travel expenses", None, CORPUS[1], "c", "m2")
    await repo.update_metadata(source_id=source_id, document=renamed)
    assert [h.uri for h in await keyword.search("expenses")] == ["travel.md"]
    assert keyword.last_build is not None and keyword.last_build.analysed == 1


async def _age_change_log(pool: asyncpg.Pool) -> None:
    """Every change-log row as if written two days ago (the pruning cut-off is a day)."""
    await pool.execute("UPDATE corpus_changes SET changed_at = now() - interval '2 days'")


async def test_an_index_older_than_the_pruned_change_log_reads_everything_again(
    pool: asyncpg.Pool, keyword: KeywordSearch, repo: DocumentRepository
) -> None:
    assert await keyword.search("laptops") == []  # read at a snapshot before the change
    await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
    await _age_change_log(pool)
    assert await repo.prune_change_log(older_than=timedelta(days=1)) > 0
    assert await pool.fetchval("SELECT count(*) FROM corpus_changes") == 0
    # The rows that said equipment.md changed are gone: only a full read can find it.
    assert [h.uri for h in await keyword.search("laptops")] == ["equipment.md"]
    assert keyword.last_build is not None and keyword.last_build.kind == "full"


async def test_pruning_keeps_recent_rows_and_later_readers_catch_up_by_changes(
    pool: asyncpg.Pool, keyword: KeywordSearch, repo: DocumentRepository
) -> None:
    await _age_change_log(pool)
    assert await repo.prune_change_log(older_than=timedelta(days=1)) > 0
    assert await keyword.search("laptops") == []  # a snapshot after the prune
    await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
    assert await repo.prune_change_log(older_than=timedelta(days=1)) == 0  # a new row stays
    assert [h.uri for h in await keyword.search("laptops")] == ["equipment.md"]
    assert keyword.last_build is not None
    assert (keyword.last_build.kind, keyword.last_build.analysed) == ("update", 1)


async def test_an_empty_corpus_finds_nothing(pool: asyncpg.Pool) -> None:
    search = KeywordSearch(CorpusReader(pool))
    try:
        assert await search.search("anything") == []
    finally:
        await search.close()


async def test_during_a_full_read_the_previous_index_answers_until_it_is_done(
    pool: asyncpg.Pool, repo: DocumentRepository
) -> None:
    # No change is small enough to apply in place: every one makes a full read.
    options = KeywordOptions(max_changed_documents=0)  # serve_stale is the default
    search = KeywordSearch(CorpusReader(pool), options=options)
    try:
        assert await search.search("laptops") == []
        built = search.version
        await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
        assert await search.search("laptops") == []  # answered at once, from the old index
        await search.refresh()  # waits for the background read
        assert search.version is not None and built is not None and search.version > built
        assert search.last_build is not None and search.last_build.kind == "full"
        assert [h.uri for h in await search.search("laptops")] == ["equipment.md"]
        assert await _pair_hits(search, pool, "laptops is requested") == [CORPUS[6]]
    finally:
        await search.close()


async def test_one_changed_document_is_searchable_at_once_without_a_full_read(
    pool: asyncpg.Pool, repo: DocumentRepository
) -> None:
    search = KeywordSearch(CorpusReader(pool))  # serve_stale, as the product runs it
    try:
        assert await search.search("laptops") == []
        await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
        assert [h.uri for h in await search.search("laptops")] == ["equipment.md"]
        assert search.last_build is not None
        assert (search.last_build.kind, search.last_build.analysed) == ("update", 1)
        assert await _pair_hits(search, pool, "laptops is requested") == [CORPUS[6]]
        # Replaced: the old text is gone, the new one is found, the rest is untouched.
        await _store(repo, "handbook", "travel.md", "Travel", ["Trains need a booking code."])
        assert [h.uri for h in await search.search("trains booking")] == ["travel.md"]
        assert await _scored_ids(search, "receipts reimbursed") == []  # not even a stale id
        assert search.last_build.kind == "update"
        assert {h.uri for h in await search.search("leave")} == {"leave.md"}
    finally:
        await search.close()


async def _scored_ids(search: KeywordSearch, query: str) -> list[int]:
    """The chunk ids the index itself returns (`search` would skip ids no longer stored)."""
    found = await search.search_scored(search.analyzer.terms(query), limit=10)
    return [chunk_id for chunk_id, _ in found.top]


async def test_deleted_chunks_never_come_back_through_updates_and_merges(
    pool: asyncpg.Pool, repo: DocumentRepository
) -> None:
    # Every update makes a small segment; two of them are merged at once.
    options = KeywordOptions(segments=SegmentPolicy(small=1_000, fanout=2))
    search = KeywordSearch(CorpusReader(pool), options=options)
    try:
        assert [h.uri for h in await search.search("receipts")] == ["travel.md"]
        source_id = await repo.ensure_source(name="handbook", kind="test")
        await repo.delete_documents(source_id=source_id, uris=["travel.md"])
        assert await _scored_ids(search, "receipts") == []
        for number in range(4):  # updates, merges, and a document edited twice
            await _store(repo, "handbook", "equipment.md", "Equipment", [f"{CORPUS[6]} {number}"])
            await _store(repo, "handbook", f"more-{number}.md", "More", [CORPUS[5]])
            assert await _scored_ids(search, "receipts") == []
            assert await _pair_hits(search, pool, "receipts are reimbursed") == []
            laptops = await search.search("laptops")
            assert [h.text for h in laptops] == [f"{CORPUS[6]} {number}"]
        assert search.last_build is not None and search.last_build.kind == "update"
        hits = await search.search_scored(search.analyzer.terms("tests parallel"), limit=10)
        assert hits.matched == 4  # one live chunk per more-N.md, none twice
    finally:
        await search.close()


async def test_a_write_that_commits_after_a_later_one_is_not_missed(
    pool: asyncpg.Pool, repo: DocumentRepository, database_url: str
) -> None:
    search = KeywordSearch(CorpusReader(pool))
    slow = await asyncpg.connect(database_url)
    try:
        assert await search.search("laptops") == []
        # A transaction that wrote first but commits last (two reindex workers, say); it
        # bumps the version only at the end, as every writer does.
        transaction = slow.transaction()
        await transaction.start()
        await slow.execute(
            "UPDATE documents SET title = 'Laptops and travel' WHERE uri = 'travel.md'"
        )
        await _store(repo, "handbook", "equipment.md", "Equipment", [CORPUS[6]])
        assert [h.uri for h in await search.search("laptops")] == ["equipment.md"]
        await slow.execute("UPDATE corpus_version SET version = version + 1")
        await transaction.commit()
        assert {h.uri for h in await search.search("laptops")} == {"equipment.md", "travel.md"}
    finally:
        await slow.close()
        await search.close()
