"""pip's long options as pip reads them: optparse takes any unique prefix of one (`--extra-index URL`,
`--constr pins.txt`), and `--pypi-url` is `--index-url`'s other name. porter knew the full names only, so an
index pip reads by its prefix gave no DEP002, and a constraints file named so got the target's extra
(thirty-fifth read; pip 23.2.1's `parse_requirements` and `pip install --dry-run` as the oracle). uv's
parser takes no prefix: its command lines keep their words as written."""

from __future__ import annotations

# pip 23.2.1's requirements file (`req_file.build_parser`)
REQUIREMENTS_FILE = tuple(
    "--config-settings --constraint --editable --extra-index-url --find-links --global-option --hash --index-url"
    " --no-binary --no-index --only-binary --pre --prefer-binary --pypi-url --require-hashes --requirement"
    " --trusted-host --use-feature".split()
)
# pip 23.2.1's `pip install` (`create_command("install").parser`, its general options too)
INSTALL = tuple(
    "--abi --break-system-packages --cache-dir --cert --check-build-dependencies --client-cert --compile"
    " --config-settings --constraint --debug --default-timeout --disable-pip-version-check --dry-run --editable"
    " --exists-action --extra-index-url --find-links --force-reinstall --global-option --help --ignore-installed"
    " --ignore-requires-python --implementation --index-url --isolated --keyring-provider --local-log --log"
    " --log-file --no-binary --no-build-isolation --no-cache-dir --no-clean --no-color --no-compile"
    " --no-dependencies --no-deps --no-index --no-input --no-python-version-warning --no-use-pep517 --no-user"
    " --no-warn-conflicts --no-warn-script-location --only-binary --platform --pre --prefer-binary --prefix"
    " --progress-bar --proxy --pypi-url --python --python-version --quiet --report --require-hashes --require-venv"
    " --require-virtualenv --requirement --retries --root --root-user-action --source --source-dir"
    " --source-directory --src --target --timeout --trusted-host --upgrade --upgrade-strategy --use-deprecated"
    " --use-feature --use-pep517 --user --verbose --version".split()
)
_SAME_AS = {"--pypi-url": "--index-url"}


def long_option(written: str, options: tuple[str, ...]) -> str:
    """The long option pip reads for `written` among `options`: itself, or the one it is a prefix of (an
    ambiguous or unknown one, which pip refuses, stays as written); `--pypi-url` as `--index-url`."""
    if not written.startswith("--") or written in options:
        return _SAME_AS.get(written, written)
    longer = [o for o in options if o.startswith(written)]
    return _SAME_AS.get(longer[0], longer[0]) if len(longer) == 1 else written


def prefixes(option: str, options: tuple[str, ...]) -> tuple[str, ...]:
    """Every way of writing `option` that pip reads as it, longest first (`--constraint` ... `--cons`)."""
    return tuple(p for n in range(len(option), 2, -1) if long_option(p := option[:n], options) == option)
