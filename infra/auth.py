"""Cognito: who may call PodStart. Browsers (code + PKCE), scripts and agents (client credentials)."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from infra.nag import acknowledge

GROUPS = {
    "viewer": "Read clusters, jobs and operations",
    "operator": "Viewer plus create/update/delete clusters, jobs and endpoints",
    "admin": "Operator plus user management and destructive account-wide actions",
}
RESOURCE_SERVER = "podstart"


class AuthConstruct(Construct):
    """User pool with groups, hosted-UI domain, a web client and a machine client."""

    user_pool: cognito.UserPool
    domain: cognito.UserPoolDomain
    web_client: cognito.UserPoolClient
    machine_client: cognito.UserPoolClient
    read_scope: cognito.OAuthScope
    write_scope: cognito.OAuthScope

    def __init__(self, scope: Construct, construct_id: str, *, web_url: str, domain_prefix: str):
        super().__init__(scope, construct_id)
        self._build_user_pool()
        self._build_groups()
        self._build_domain(domain_prefix)
        self._build_resource_server()
        self._build_web_client(web_url)
        self._build_machine_client()

    @property
    def hosted_ui_origin(self) -> str:
        return self.domain.base_url()

    @property
    def web_scopes(self) -> str:
        """The scopes the browser client asks for (space-separated, as in an OAuth request)."""
        return " ".join(["openid", "email", "profile", self.read_scope.scope_name])

    def _build_user_pool(self) -> None:
        self.user_pool = cognito.UserPool(
            self,
            "UserPool",
            self_sign_up_enabled=False,  # admins invite users
            sign_in_aliases=cognito.SignInAliases(email=True, username=True),
            auto_verify=cognito.AutoVerifiedAttrs(email=True),
            password_policy=cognito.PasswordPolicy(
                min_length=14,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
                temp_password_validity=cdk.Duration.days(3),
            ),
            mfa=cognito.Mfa.OPTIONAL,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            deletion_protection=True,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        acknowledge(
            self.user_pool,
            "AwsSolutions-COG2",
            "MFA is OPTIONAL (TOTP, no SMS) so invited users can enrol on first sign-in; scripts and "
            "agents use client credentials, not passwords.",
        )
        acknowledge(
            self.user_pool,
            "AwsSolutions-COG8",
            "The Plus feature plan (threat protection, compromised-credential checks) is billed per "
            "active user; PodStart defaults to Essentials with MFA available, strong passwords and no "
            "self sign-up. Switch the pool to Plus where required.",
        )

    def _build_groups(self) -> None:
        for precedence, (name, description) in enumerate(reversed(GROUPS.items())):
            cognito.CfnUserPoolGroup(
                self,
                f"{name.capitalize()}Group",
                user_pool_id=self.user_pool.user_pool_id,
                group_name=name,
                description=description,
                precedence=precedence,
            )

    def _build_domain(self, prefix: str) -> None:
        self.domain = self.user_pool.add_domain(
            "Domain", cognito_domain=cognito.CognitoDomainOptions(domain_prefix=prefix)
        )

    def _build_resource_server(self) -> None:
        self.read_scope_def = cognito.ResourceServerScope(
            scope_name="read", scope_description="Read PodStart"
        )
        self.write_scope_def = cognito.ResourceServerScope(
            scope_name="write", scope_description="Start PodStart operations"
        )
        self.resource_server = self.user_pool.add_resource_server(
            "ResourceServer",
            identifier=RESOURCE_SERVER,
            scopes=[self.read_scope_def, self.write_scope_def],
        )
        self.read_scope = cognito.OAuthScope.resource_server(self.resource_server, self.read_scope_def)
        self.write_scope = cognito.OAuthScope.resource_server(self.resource_server, self.write_scope_def)

    def _build_web_client(self, web_url: str) -> None:
        # Public SPA client: authorization code + PKCE (no secret can live in a browser).
        self.web_client = self.user_pool.add_client(
            "WebClient",
            generate_secret=False,
            auth_flows=cognito.AuthFlow(user_srp=True),
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                # Never podstart/write: a browser user's role comes from their Cognito groups, and the
                # write scope counts only for the machine client (a token without a user).
                scopes=[
                    cognito.OAuthScope.OPENID,
                    cognito.OAuthScope.EMAIL,
                    cognito.OAuthScope.PROFILE,
                    self.read_scope,
                ],
                callback_urls=[f"{web_url}/", f"{web_url}/callback"],
                logout_urls=[f"{web_url}/"],
            ),
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
            access_token_validity=cdk.Duration.hours(1),
            id_token_validity=cdk.Duration.hours(1),
            refresh_token_validity=cdk.Duration.days(7),
        )

    def _build_machine_client(self) -> None:
        # Confidential client for scripts and agents (client credentials, resource-server scopes);
        # the only client that may request podstart/write.
        self.machine_client = self.user_pool.add_client(
            "MachineClient",
            generate_secret=True,
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(client_credentials=True),
                scopes=[self.read_scope, self.write_scope],
            ),
            enable_token_revocation=True,
            access_token_validity=cdk.Duration.hours(1),
        )
