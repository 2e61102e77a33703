# Signs requests with botocore's S3 SigV4 signer, for the tests of Flow's own signer.
#   python3 botocore_sigv4.py CASES.json   prints [{"signature", "signedHeaders", "canonical"}] as JSON
import json, sys, datetime
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
cases = json.load(open(sys.argv[1]))
out = []
for c in cases:
    creds = Credentials(c["accessKeyID"], c["secret"], c.get("token"))
    auth = S3SigV4Auth(creds, "s3", c["region"])
    headers = dict(c["headers"])
    headers["X-Amz-Date"] = c["amzDate"]
    headers["X-Amz-Content-SHA256"] = c["payloadHash"]
    if c.get("token"): headers["X-Amz-Security-Token"] = c["token"]
    request = AWSRequest(method=c["method"], url="http://" + c["host"] + c["path"], headers=headers,
                         params=dict(c["query"]) if c["query"] else None)
    request.context["timestamp"] = c["amzDate"]
    request.headers["Host"] = c["host"]
    canonical = auth.canonical_request(request)
    string_to_sign = auth.string_to_sign(request, canonical)
    signature = auth.signature(string_to_sign, request)
    out.append({"signature": signature, "signedHeaders": auth.signed_headers(auth.headers_to_sign(request)), "canonical": canonical})
json.dump(out, sys.stdout)
