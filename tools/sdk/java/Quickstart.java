package example.client;

import example.client.api.ApiKeysApi;
import example.client.api.AppsApi;
import example.client.api.AuthApi;
import example.client.api.WantsApi;
import example.client.auth.ApiKeyAuth;
import example.client.model.CreateApiKeyDto;
import example.client.model.CreateAppDto;
import example.client.model.CreateWantDto;
import example.client.model.LoginDto;

/**
 * The SDK example flow with a Java client from openapi-generator (okhttp-gson, which refuses any field the
 * document does not declare): sign in, create an app and an API key, add a want with the key, read a 404.
 */
public class Quickstart {
  public static void main(String[] args) throws Exception {
    String baseUrl = System.getenv("BASE_URL");
    String appId = System.getenv("APP_ID");

    ApiClient staff = new ApiClient().setBasePath(baseUrl);
    LoginDto login = new LoginDto().email(System.getenv("EMAIL")).password(System.getenv("PASSWORD"));
    staff.setBearerToken(new AuthApi(staff).login(login).getToken());
    new AppsApi(staff).createApp(new CreateAppDto().id(appId).name("My Shop"));
    CreateApiKeyDto keyBody = new CreateApiKeyDto().appId(appId).name("Shop backend");
    String key = new ApiKeysApi(staff).createApiKey(keyBody).getData().getKey();

    ApiClient backend = new ApiClient().setBasePath(baseUrl);
    ((ApiKeyAuth) backend.getAuthentication("api-key")).setApiKey(key);
    WantsApi wants = new WantsApi(backend);
    CreateWantDto want =
        new CreateWantDto().title("Gift wrapping").description("A card and paper").category("checkout");
    String wantId = wants.createWant(appId, want, null).getData().getStorageId();
    try {
      wants.getWant(appId, "0123456789abcdef01234567", null);
      throw new IllegalStateException("an unknown want was found");
    } catch (ApiException missing) {
      String status = "\"status\":" + missing.getCode();
      String body = "\"body\":" + missing.getResponseBody();
      System.out.println("{\"wantId\":\"" + wantId + "\"," + status + "," + body + "}");
    }
  }
}
