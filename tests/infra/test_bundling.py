"""Given the offline bundler, a function's asset is importable code with bytecode and no tests."""

from __future__ import annotations

from functions.lambdas import LAMBDAS
from infra.bundling import build_bundle, bundle_size_bytes


def test_bundle_ships_handler_bytecode_and_dependencies_without_tests(synth):
    # Given the bundle the synth built for the events function (cached: no rebuild here)
    spec = LAMBDAS["api"]
    bundle = build_bundle(spec)
    module = spec.handler.rpartition(".")[0].replace(".", "/")
    # Then the handler module and its bytecode are there
    assert (bundle / f"{module}.py").is_file()
    assert list((bundle / module).parent.glob("__pycache__/handler.cpython-311.pyc"))
    # And the dependencies, boto3/botocore included (newer than the runtime's), as bytecode only
    for package in ("boto3", "botocore", "pydantic", "pydantic_core", "aws_lambda_powertools"):
        assert (bundle / package / "__init__.pyc").is_file(), package
    # And no tests folder
    assert not (bundle / "tests").exists()
    assert not list(bundle.glob("functions/**/tests"))
    # And it fits Lambda's 250 MB unzipped limit
    assert bundle_size_bytes(bundle) < 250 * 1024 * 1024


def test_steps_bundle_carries_kubernetes_but_not_its_asyncio_client(synth):
    bundle = build_bundle(LAMBDAS["steps"])
    assert (bundle / "kubernetes" / "client" / "__init__.pyc").is_file()
    assert not (bundle / "kubernetes" / "aio").exists()
    assert bundle_size_bytes(bundle) < 250 * 1024 * 1024


def test_the_live_socket_authorizer_ships_its_jwt_library_and_the_follower_no_kubernetes_client():
    auth = build_bundle(LAMBDAS["liveauth"])
    assert (auth / "jwt").is_dir() and (auth / "cryptography").is_dir()
    follow = build_bundle(LAMBDAS["follow"])
    assert (follow / "functions" / "live" / "follower.py").is_file() and not (follow / "kubernetes").exists()


def test_steps_bundle_carries_the_kuberay_crds_the_feature_applies(synth):
    # the kuberay_operator feature server-side applies the upstream CRDs from package data: the bundle must have them
    bundle = build_bundle(LAMBDAS["steps"])
    shipped = sorted(p.name for p in (bundle / "functions" / "domain" / "crds").iterdir())
    assert shipped == [f"kuberay_v1.7.0_{p}.json.gz" for p in ("rayclusters", "rayjobs", "rayservices")]
