"""The static web UI: private S3 bucket behind CloudFront (OAC), strict security headers.

The site is deployed with its ``/config.json`` (what ``web/src/auth.ts`` reads to sign in with the
Cognito hosted UI: ``auth``, ``userPoolDomain``, ``clientId``, ``apiUrl``, ``scopes``, plus
``userPoolId`` and ``region``). It is served from the site's own origin, so the CSP's
``connect-src 'self'`` covers it, and every deployment invalidates it with ``/index.html``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from infra.bundling import REPO_ROOT
from infra.checkov import skip
from infra.nag import acknowledge

WEB_DIST = REPO_ROOT / "web" / "dist"
CONFIG_FILE = "config.json"


@jsii.implements(cdk.IStableStringProducer)
class _Producer:
    def __init__(self, produce: Callable[[], str]):
        self._produce = produce

    def produce(self) -> str:
        return self._produce()


class WebConstruct(Construct):
    """Bucket + distribution. ``connect_origins`` is read lazily: the API and the hosted UI are
    built after the distribution (they need its domain for CORS and OAuth callbacks)."""

    bucket: s3.Bucket
    headers: cloudfront.ResponseHeadersPolicy
    distribution: cloudfront.Distribution
    deployment: s3deploy.BucketDeployment | None
    config: dict[str, str]  # /config.json as deployed (values may be deploy-time tokens)

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        logs_bucket: s3.IBucket,
        connect_origins: Callable[[], Sequence[str]],
        dist: Path = WEB_DIST,
    ):
        super().__init__(scope, construct_id)
        self._dist = dist
        self.deployment = None
        self.config = {}
        self._build_bucket(logs_bucket)
        self._build_headers(connect_origins)
        self._build_distribution(logs_bucket)

    @property
    def url(self) -> str:
        return f"https://{self.distribution.distribution_domain_name}"

    def _build_bucket(self, logs_bucket: s3.IBucket) -> None:
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=logs_bucket,
            server_access_logs_prefix="s3/web/",
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=cdk.Duration.days(30))],
            removal_policy=cdk.RemovalPolicy.DESTROY,  # rebuilt from web/dist on every deploy
            auto_delete_objects=False,
        )

    def _build_headers(self, connect_origins: Callable[[], Sequence[str]]) -> None:
        csp = cdk.Lazy.string(
            _Producer(
                lambda: "; ".join(
                    [
                        "default-src 'self'",
                        "connect-src 'self' " + " ".join(connect_origins()),
                        "img-src 'self' data:",
                        "style-src 'self' 'unsafe-inline'",  # Cloudscape injects style attributes
                        "font-src 'self' data:",
                        "object-src 'none'",
                        "base-uri 'self'",
                        "form-action 'self'",
                        "frame-ancestors 'none'",
                    ]
                )
            )
        )
        self.headers = cloudfront.ResponseHeadersPolicy(
            self,
            "SecurityHeaders",
            comment="PodStart UI security headers",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=cdk.Duration.days(730),
                    include_subdomains=True,
                    preload=True,
                    override=True,
                ),
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=csp, override=True
                ),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
                    override=True,
                ),
            ),
        )

    def _build_distribution(self, logs_bucket: s3.IBucket) -> None:
        spa_fallback = [
            cloudfront.ErrorResponse(
                http_status=status,
                response_http_status=200,
                response_page_path="/index.html",
                ttl=cdk.Duration.seconds(10),
            )
            for status in (403, 404)
        ]
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="PodStart web UI",
            default_root_object="index.html",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self.bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=self.headers,
                compress=True,
            ),
            error_responses=spa_fallback,
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            enable_logging=True,
            log_bucket=logs_bucket,
            log_file_prefix="cloudfront/",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR1",
            "A control plane for the operator's own account; no country-specific access requirement.",
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR2",
            "Static files only, every API call is authenticated by Cognito; WAF (a standing monthly "
            "cost) is left to deployments that need it.",
        )
        skip(
            self.distribution,
            ("CKV_AWS_68", "Static files only, every API call is authenticated by Cognito; WAF (a standing monthly "
                           "cost) is left to deployments that need it."),
            ("CKV_AWS_174", "The default *.cloudfront.net certificate cannot enforce a minimum TLS version; a custom "
                            "domain with an ACM certificate gets TLSv1.2_2021 (set in minimum_protocol_version)."),
        )
        acknowledge(
            self.distribution,
            "AwsSolutions-CFR4",
            "Uses the default *.cloudfront.net certificate, where CloudFront cannot enforce TLS 1.2; "
            "a custom domain with an ACM certificate gets TLSv1.2_2021.",
        )

    def deploy(self, config: Mapping[str, str]) -> s3deploy.BucketDeployment:
        """Deploy web/dist (when built) and ``/config.json`` = ``config`` (deploy-time values allowed).

        Called by the stack once the user pool, its client and the API exist. Without web/dist
        (``make web`` builds it) only config.json is deployed and nothing is pruned.
        """
        built = (self._dist / "index.html").is_file()
        self.config = dict(config)
        sources = [s3deploy.Source.asset(str(self._dist))] if built else []
        sources.append(s3deploy.Source.json_data(CONFIG_FILE, self.config))
        self.deployment = s3deploy.BucketDeployment(
            self,
            "Deploy",
            destination_bucket=self.bucket,
            sources=sources,
            distribution=self.distribution,
            distribution_paths=["/index.html", f"/{CONFIG_FILE}"],
            prune=built,
        )
        return self.deployment
