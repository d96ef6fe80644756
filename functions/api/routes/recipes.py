"""/v1/recipes: versioned training templates with typed, described parameters on one data contract."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from functions.api.context import model_response, principal
from functions.domain.training import recipes

router = Router()


@router.get("/v1/recipes", summary="Training recipes: versioned templates with typed parameters on one data contract",
            tags=["jobs"], responses={200: {"description": "OK",
                                            "content": {"application/json": {"model": recipes.RecipeList}}}})
def list_recipes() -> Response[str]:
    principal(router)
    return model_response(recipes.list_recipes())
