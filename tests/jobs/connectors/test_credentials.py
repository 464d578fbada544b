"""Credentials are named by environment variable in sources.toml; only bot/ reads them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jobs.config import ConnectorSettings
from jobs.connectors.base import ConnectorContext, Credential
from jobs.connectors.errors import MissingCredentialError

SECRET = "ntn_4fakeTokenThatMustNeverBePrinted"


class TokenSettings(ConnectorSettings):
    token_env: str = "EXAMPLE_TOKEN"


def test_a_pasted_secret_is_refused_without_being_repeated() -> None:
    with pytest.raises(ValidationError) as caught:
        TokenSettings(token_env=SECRET)
    assert "token_env must name an environment variable" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_the_settings_name_their_credential_variables() -> None:
    assert TokenSettings(token_env="TEAM_NOTION_TOKEN").credential_envs() == ["TEAM_NOTION_TOKEN"]


def test_a_missing_variable_is_one_line_naming_it_and_a_credential_hides_its_value() -> None:
    context = ConnectorContext(credentials={"SET_TOKEN": SECRET})
    with pytest.raises(MissingCredentialError, match="UNSET_TOKEN is not set"):
        context.credential(source="wiki", env="UNSET_TOKEN")
    credential = context.credential(source="wiki", env="SET_TOKEN")
    assert credential == Credential("SET_TOKEN", SECRET)
    assert SECRET not in repr(credential) and SECRET not in repr(context)
