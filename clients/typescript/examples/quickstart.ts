import { createAdminServiceClient, type ErrorEnvelope } from '../src';

export async function quickstart(baseUrl: string, email: string, password: string, appId = 'my-shop') {
  // Sign in as staff (the `bearer` scheme).
  const login = await createAdminServiceClient(baseUrl).POST('/auth/login', { body: { email, password } });
  if (!login.data) throw new Error(`sign-in refused: ${login.error?.error}`);
  const admin = createAdminServiceClient(baseUrl, { token: login.data.token });

  // Create an app and an API key for its backend (the key's value is shown on creation).
  const app = await admin.POST('/admin/apps', { body: { id: appId, name: 'My Shop', active: true } });
  if (!app.data) throw new Error(`app not created: ${app.error?.error}`);
  const key = await admin.POST('/api-keys', { body: { appId, name: 'Shop backend' } });
  if (!key.data) throw new Error(`key not created: ${key.error?.error}`);

  // As the app's backend (the `api-key` scheme): add a want, then read one that does not exist.
  const backend = createAdminServiceClient(baseUrl, { apiKey: key.data.data.key });
  const want = await backend.POST('/{appId}/wants', {
    params: { path: { appId } },
    body: { title: 'Gift wrapping', description: 'A card and paper at checkout', category: 'checkout' },
  });
  if (!want.data) throw new Error(`want not created: ${want.error?.error}`);
  const missing = await backend.GET('/{appId}/wants/{id}', {
    params: { path: { appId, id: '0123456789abcdef01234567' } },
  });
  const notFound: ErrorEnvelope | undefined = missing.error; // { success: false, error: 'Want not found' }

  return { wantId: want.data.data._id, status: missing.response.status, notFound };
}
