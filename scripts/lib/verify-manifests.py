#!/usr/bin/env python3
"""Cross-checks the Kubernetes manifests of deploy/kubernetes, beyond what a schema can see.

    verify-manifests.py DIR [--bin FOLDER]

- Names that refer to each other: a Deployment's selector and its pods' labels, a Service's
  selector and the pods it is meant for, its named target ports, volume mounts and volumes,
  the Secrets and ConfigMaps (and their keys) a pod mounts, $(VAR) in args and env.
- A HorizontalPodAutoscaler: its scaleTargetRef and the objects its Object metrics describe must
  be resources of these manifests (kind, name and apiVersion), minReplicas at most maxReplicas,
  and the workload it scales must not set spec.replicas (every `kubectl apply` would reset the
  autoscaler's count to it).
- With --bin (the folder of a built flow-worker and flow-coordinator): the programs' own
  argument parsers. A flow-worker container's args are parsed for real (`flow-worker ARGS
  --list-ops`, with the container's env); every --flag of a flow-coordinator container must be in
  its subcommand's --help; a flow file it runs from a ConfigMap goes through
  `flow-coordinator validate`.

Prints one line per problem, `FILE: KIND/NAME: what`, and exits 1 if there is any, else 0.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

import yaml

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}
problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def load(folder):
    """Every resource under `folder`, as (file, resource)."""
    resources = []
    files = sorted(glob.glob(os.path.join(folder, "**", "*.yaml"), recursive=True)
                   + glob.glob(os.path.join(folder, "**", "*.yml"), recursive=True))
    for path in files:
        try:
            with open(path) as f:
                documents = [d for d in yaml.safe_load_all(f) if d]
        except yaml.YAMLError as error:
            problem(path, f"not YAML: {error}")
            continue
        if not documents:
            problem(path, "no resource in it")
        for document in documents:
            if not isinstance(document, dict) or "kind" not in document:
                problem(path, "a document without kind")
                continue
            resources.append((path, document))
    return resources


def name_of(resource):
    return f"{resource.get('kind')}/{(resource.get('metadata') or {}).get('name', '?')}"


def pod_of(resource):
    """The pod template (metadata, spec) of a workload, or of a Pod itself."""
    if resource["kind"] == "Pod":
        return resource.get("metadata") or {}, resource.get("spec") or {}
    if resource["kind"] == "CronJob":
        template = (((resource.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    elif resource["kind"] in WORKLOADS:
        template = (resource.get("spec") or {}).get("template") or {}
    else:
        return None
    return template.get("metadata") or {}, template.get("spec") or {}


def containers_of(spec):
    return (spec.get("initContainers") or []) + (spec.get("containers") or [])


def keys_of(resource):
    return set((resource.get("data") or {}).keys()) | set((resource.get("stringData") or {}).keys()) \
        | set((resource.get("binaryData") or {}).keys())


def check_references(resources):
    secrets = {r["metadata"]["name"]: r for _, r in resources if r["kind"] == "Secret"}
    config_maps = {r["metadata"]["name"]: r for _, r in resources if r["kind"] == "ConfigMap"}
    pods = []  # (file, resource, labels, spec)
    for path, resource in resources:
        where = f"{path}: {name_of(resource)}"
        pod = pod_of(resource)
        if pod is None:
            continue
        metadata, spec = pod
        labels = metadata.get("labels") or {}
        pods.append((path, resource, labels, spec))
        if resource["kind"] in WORKLOADS - {"Job"}:
            wanted = ((resource.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            for key, value in wanted.items():
                if labels.get(key) != value:
                    problem(where, f"selector {key}={value} does not match its pod template's labels {labels}")
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        for volume in volumes.values():
            if "secret" in volume:
                source, kind, store, name = volume["secret"], "Secret", secrets, volume["secret"].get("secretName")
            elif "configMap" in volume:
                source, kind, store, name = volume["configMap"], "ConfigMap", config_maps, volume["configMap"].get("name")
            else:
                continue
            if name not in store:
                if not source.get("optional"):
                    problem(where, f"volume {volume.get('name')}: no {kind} named '{name}' in these manifests")
                continue
            for item in source.get("items") or []:
                if item.get("key") not in keys_of(store[name]):
                    problem(where, f"volume {volume.get('name')}: {kind} '{name}' has no key '{item.get('key')}'")
        for container in containers_of(spec):
            cwhere = f"{where}: container {container.get('name')}"
            for mount in container.get("volumeMounts") or []:
                if mount.get("name") not in volumes:
                    problem(cwhere, f"mounts volume '{mount.get('name')}', which the pod does not declare")
            defined = {e.get("name") for e in container.get("env") or []}
            for text in (container.get("command") or []) + (container.get("args") or []):
                for variable in re.findall(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)", str(text)):
                    if variable not in defined:
                        problem(cwhere, f"uses $({variable}), which its env does not define")
            for entry in container.get("env") or []:
                ref = (entry.get("valueFrom") or {}).get("secretKeyRef") or (entry.get("valueFrom") or {}).get("configMapKeyRef")
                if ref:
                    store = secrets if "secretKeyRef" in entry["valueFrom"] else config_maps
                    if ref.get("name") not in store or ref.get("key") not in keys_of(store[ref.get("name")]):
                        problem(cwhere, f"env {entry.get('name')}: no key '{ref.get('key')}' in '{ref.get('name')}'")
    for path, resource in resources:
        if resource["kind"] != "Service":
            continue
        where = f"{path}: {name_of(resource)}"
        selector = (resource.get("spec") or {}).get("selector") or {}
        if not selector:
            continue
        matched = [(p, r, spec) for p, r, labels, spec in pods
                   if all(labels.get(k) == v for k, v in selector.items())]
        if not matched:
            problem(where, f"selector {selector} matches no pod template in these manifests")
            continue
        port_names = {port.get("name") for _, _, spec in matched for c in containers_of(spec) for port in c.get("ports") or []}
        for port in (resource.get("spec") or {}).get("ports") or []:
            target = port.get("targetPort")
            if isinstance(target, str) and target not in port_names:
                problem(where, f"port {port.get('name')}: targetPort '{target}' is no container port name of "
                               f"{', '.join(sorted({name_of(r) for _, r, _ in matched}))}")
    return pods, config_maps


def check_autoscalers(resources):
    by_kind_name = {(r.get("kind"), (r.get("metadata") or {}).get("name")): r for _, r in resources}
    for path, resource in resources:
        if resource["kind"] != "HorizontalPodAutoscaler":
            continue
        where = f"{path}: {name_of(resource)}"
        spec = resource.get("spec") or {}
        references = [("scaleTargetRef", spec.get("scaleTargetRef") or {})]
        for index, metric in enumerate(spec.get("metrics") or []):
            if metric.get("type") == "Object":
                references.append((f"metric {index + 1} ({((metric.get('object') or {}).get('metric') or {}).get('name')})",
                                   (metric.get("object") or {}).get("describedObject") or {}))
        for what, ref in references:
            kind, name, api = ref.get("kind"), ref.get("name"), ref.get("apiVersion")
            target = by_kind_name.get((kind, name))
            if target is None:
                problem(where, f"{what}: no {kind} named '{name}' in these manifests")
                continue
            if api and target.get("apiVersion") != api:
                problem(where, f"{what}: {kind}/{name} is {target.get('apiVersion')}, not {api}")
            if what == "scaleTargetRef":
                if kind not in WORKLOADS - {"Job", "DaemonSet"}:
                    problem(where, f"scaleTargetRef: a {kind} cannot be scaled")
                elif "replicas" in (target.get("spec") or {}):
                    problem(where, f"scaleTargetRef: {kind}/{name} sets spec.replicas, which every kubectl apply "
                                   "would set again over the autoscaler's count: leave it out")
        low, high = spec.get("minReplicas", 1), spec.get("maxReplicas")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            problem(where, f"minReplicas {low} is more than maxReplicas {high}")


def expand(text, env):
    """Kubernetes' $(VAR) expansion, with values the check can know."""
    return re.sub(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), str(text))


def check_programs(pods, config_maps, binaries):
    for path, resource, _, spec in pods:
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        for container in containers_of(spec):
            where = f"{path}: {name_of(resource)}: container {container.get('name')}"
            command = [str(c) for c in container.get("command") or []]
            program = os.path.basename(command[0]) if command else "flow-worker"  # the image's entrypoint
            if program not in ("flow-worker", "flow-coordinator"):
                continue
            env = {}
            for entry in container.get("env") or []:
                env[entry.get("name")] = str(entry["value"]) if "value" in entry else f"value-of-{entry.get('name')}"
            args = [expand(a, env) for a in command[1:] + [str(a) for a in container.get("args") or []]]
            executable = os.path.join(binaries, program)
            child_env = dict(os.environ)
            for key in list(child_env):
                if key.startswith("FLOW_"):
                    del child_env[key]
            child_env.update(env)
            if program == "flow-worker":
                # --list-ops parses and validates every option, then lists the ops without connecting.
                result = subprocess.run([executable] + args + ["--list-ops"], env=child_env, capture_output=True,
                                        text=True, timeout=60)
                if result.returncode != 0:
                    message = (result.stderr.strip() or result.stdout.strip()).splitlines()
                    problem(where, f"flow-worker refuses its args {args}: {message[0] if message else result.returncode}")
                continue
            # flow-coordinator SUBCOMMAND …: its flags must be the subcommand's.
            subcommand = args[0] if args and not args[0].startswith("-") else None
            help_args = [executable] + ([subcommand] if subcommand else []) + ["--help"]
            result = subprocess.run(help_args, env=child_env, capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                problem(where, f"'{' '.join(help_args[1:])}' failed: {result.stderr.strip()[:200]}")
                continue
            known = set(re.findall(r"(--[a-z][a-z0-9-]*)", result.stdout))
            for arg in args:
                flag = arg.split("=", 1)[0]
                if flag.startswith("--") and flag not in known:
                    problem(where, f"flow-coordinator {subcommand or ''} has no option {flag}")
            if subcommand not in ("run", "validate", "show"):
                continue
            # The flow file, when a ConfigMap mounted into this container holds it.
            operands = [a for i, a in enumerate(args[1:], 1)
                        if not a.startswith("-") and not (args[i - 1].startswith("--") and "=" not in args[i - 1]
                                                          and args[i - 1] not in ("--insecure", "--quiet", "--full-summary",
                                                                                  "--no-journal", "--strict"))]
            if not operands:
                problem(where, f"flow-coordinator {subcommand} without a flow file")
                continue
            flow_file = operands[0]
            for mount in container.get("volumeMounts") or []:
                volume = volumes.get(mount.get("name")) or {}
                mount_path = mount.get("mountPath", "").rstrip("/") + "/"
                if "configMap" not in volume or not flow_file.startswith(mount_path):
                    continue
                relative = flow_file[len(mount_path):]
                config_map = config_maps.get(volume["configMap"].get("name"))
                if config_map is None:
                    break  # reported above
                items = {i.get("path"): i.get("key") for i in volume["configMap"].get("items") or []}
                key = items.get(relative, relative) if items else relative
                text = (config_map.get("data") or {}).get(key)
                if text is None:
                    problem(where, f"runs {flow_file}, but ConfigMap '{volume['configMap'].get('name')}' has no key '{key}'")
                    break
                with tempfile.TemporaryDirectory() as folder:
                    copy = os.path.join(folder, os.path.basename(relative))
                    with open(copy, "w") as f:
                        f.write(text)
                    result = subprocess.run([executable, "validate", copy], env=child_env, capture_output=True,
                                            text=True, timeout=60)
                if result.returncode != 0:
                    lines = (result.stderr + result.stdout).strip().replace(copy, f"{volume['configMap'].get('name')}[{key}]")
                    problem(where, f"flow-coordinator validate {flow_file}: {lines}")
                break


def main():
    arguments = sys.argv[1:]
    binaries = None
    if "--bin" in arguments:
        index = arguments.index("--bin")
        binaries = arguments[index + 1]
        del arguments[index:index + 2]
    if len(arguments) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    resources = load(arguments[0])
    pods, config_maps = check_references(resources)
    check_autoscalers(resources)
    if binaries:
        check_programs(pods, config_maps, binaries)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
