import admin_service_client as sdk
from admin_service_client.exceptions import NotFoundException


def quickstart(base_url: str, email: str, password: str, app_id: str = "my-shop") -> dict:
    # Sign in as staff (the `bearer` scheme): the configuration sends the token on every staff call.
    staff = sdk.Configuration(host=base_url)
    with sdk.ApiClient(staff) as client:
        staff.access_token = sdk.AuthApi(client).login(sdk.LoginDto(email=email, password=password)).token

        # Create an app and an API key for its backend (the key's value is shown on creation).
        sdk.AppsApi(client).create_app(sdk.CreateAppDto(id=app_id, name="My Shop"))
        key = sdk.APIKeysApi(client).create_api_key(sdk.CreateApiKeyDto(app_id=app_id, name="Shop backend"))

    # As the app's backend (the `api-key` scheme): add a want, then read one that does not exist.
    backend = sdk.Configuration(host=base_url, api_key={"api-key": key.data.key})
    with sdk.ApiClient(backend) as client:
        wants = sdk.WantsApi(client)
        body = sdk.CreateWantDto(
            title="Gift wrapping", description="A card and paper at checkout", category="checkout"
        )
        want = wants.create_want(app_id, body).data
        try:
            wants.get_want(app_id, "0123456789abcdef01234567")
            raise AssertionError("an unknown want was found")
        except NotFoundException as error:
            # 404 and ErrorSchema(success=False, error='Want not found')
            status, not_found = error.status, error.data

    return {"want_id": want.storage_id, "status": status, "not_found": not_found.to_dict()}


if __name__ == "__main__":
    import json
    import os

    env = os.environ
    result = quickstart(env["BASE_URL"], env["EMAIL"], env["PASSWORD"], env.get("APP_ID", "my-shop"))
    print(json.dumps(result))
