"""Given the synthesized stack, workflows are observable and events reach the projector."""

from __future__ import annotations

import json

from infra.workflows import workflow_files, workflow_kind


def test_one_standard_state_machine_per_definition_with_logs_and_tracing(synth):
    machines = synth.of_type("AWS::StepFunctions::StateMachine")
    assert len(machines) == len(workflow_files(synth.statemachines_dir)) >= 1
    for machine in machines.values():
        props = machine["Properties"]
        assert props["StateMachineType"] == "STANDARD"
        assert props["TracingConfiguration"] == {"Enabled": True}
        assert props["LoggingConfiguration"]["Level"] == "ALL"
        assert props["LoggingConfiguration"]["IncludeExecutionData"] is False
        # The definition's ${StepsFunctionArn} is the deployed steps function
        assert props["DefinitionSubstitutions"]["StepsFunctionArn"]["Fn::GetAtt"][0].startswith(
            "FunctionsSteps"
        )


def test_file_names_become_operation_kinds(synth):
    kinds = {workflow_kind(p) for p in workflow_files(synth.statemachines_dir)}
    assert "cluster.create" in kinds
    assert set(synth.stack.workflows.state_machines) == kinds


def test_each_workflow_role_can_only_invoke_the_steps_function(synth):
    machines = synth.of_type("AWS::StepFunctions::StateMachine").values()
    role_ids = {m["Properties"]["RoleArn"]["Fn::GetAtt"][0] for m in machines}
    assert len(role_ids) == len(list(machines))  # one role per state machine
    for role_id in role_ids:
        statements = [
            s
            for p in synth.of_type("AWS::IAM::Policy").values()
            if any(r["Ref"] == role_id for r in p["Properties"]["Roles"])
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]
        invoke = [s for s in statements if "lambda:InvokeFunction" in json.dumps(s["Action"])]
        assert invoke and all("FunctionsSteps" in json.dumps(s["Resource"]) for s in invoke)
        allowed_prefixes = ("lambda:InvokeFunction", "logs:", "xray:", "events:PutEvents")
        for statement in statements:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            assert all(a.startswith(allowed_prefixes) for a in actions), actions


def test_podstart_bus_exists_and_both_rules_feed_the_events_function(template, synth):
    template.has_resource_properties("AWS::Events::EventBus", {"Name": "podstart"})
    rules = [r for r in synth.of_type("AWS::Events::Rule").values() if "EventPattern" in r["Properties"]]
    patterns = {json.dumps(r["Properties"]["EventPattern"]["source"]): r for r in rules}
    states = patterns['["aws.states"]']["Properties"]
    assert states["EventPattern"]["detail-type"] == ["Step Functions Execution Status Change"]
    assert states["EventPattern"]["detail"]["stateMachineArn"]  # only PodStart's machines
    hyperpod = patterns['["aws.sagemaker"]']["Properties"]
    assert set(hyperpod["EventPattern"]["detail-type"]) == {
        "SageMaker HyperPod Cluster State Change",
        "SageMaker HyperPod Cluster Node Health",
        "SageMaker HyperPod Cluster Event",
    }
    for rule in (states, hyperpod):
        assert "EventBusName" not in rule  # AWS service events arrive on the default bus
        assert rule["Targets"][0]["Arn"]["Fn::GetAtt"][0].startswith("FunctionsEvents")


def test_only_the_events_and_steps_functions_may_end_a_workflows_task_token_wait(synth):
    """A wait an AWS event ends (a HyperPod state change, a child execution's end) resumes by SendTaskSuccess: the
    events function sends it when the event comes, the steps function when the event came before the wait. The
    action allows no resource-level scope (the token names the execution), so it is granted alone, to those two."""
    def resume_statements(name: str) -> list[dict]:
        return [s for s in synth.role_statements(name) if s["Effect"] == "Allow"
                and any(a.startswith("states:SendTask") for a in _actions(s))]

    for name in ("events", "steps"):
        [statement] = resume_statements(name)
        assert _actions(statement) == ["states:SendTaskSuccess"] and statement.get("Condition") is None
    for name in ("api", "mcp", "live", "follow"):
        assert resume_statements(name) == [], name
    machines = synth.of_type("AWS::StepFunctions::StateMachine").values()
    create = next(json.dumps(m["Properties"]["DefinitionString"]) for m in machines
                  if "hyperpod_cluster~event" in json.dumps(m["Properties"]["DefinitionString"])
                  and "eks_control_plane" in json.dumps(m["Properties"]["DefinitionString"]))
    assert "lambda:invoke.waitForTaskToken" in create and "TimeoutSecondsPath" in create


def _actions(statement: dict) -> list[str]:
    return statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
