/**
 * Swagger UI plugins for the staff who use /docs as their interface. They run in the browser: @nestjs/swagger
 * writes each function's source (Function.prototype.toString) into /docs/swagger-ui-init.js, so a body may
 * use only its arguments and browser globals, never an import or a constant of this module. The browser gate
 * (tools/browser/swagger-ui.ts) runs them.
 */

/** The little of Swagger UI's system the plugins use (its state is Immutable.js). */
interface ImmutableValue {
  getIn(path: string[]): ImmutableValue | undefined;
  toJS(): unknown;
}
interface SwaggerUiSystem {
  specSelectors: { specJson(): ImmutableValue };
  authActions: {
    authorizeWithPersistOption(
      payload: Record<string, { name: string; schema: unknown; value: string }>,
    ): void;
  };
}
/** What "Try it out" got back: swagger-client's response, the JSON body parsed. */
interface ExecutedResponse {
  ok: boolean;
  body?: unknown;
}
type SetResponse = (path: string, method: string, response: ExecutedResponse) => unknown;
type ShowDefinitions = (definitions: unknown) => unknown;

/** The page, typed here because the project compiles without the DOM library. */
interface BrowserPage {
  document: {
    querySelector(selector: string): { focus(): void; scrollTop: number } | null;
  };
  requestAnimationFrame(callback: () => void): number;
  SwaggerUIBundle: { plugins: { DownloadUrl: (system: unknown) => unknown } };
}

/** The plugin @nestjs/swagger lists by default, kept since setting `plugins` replaces that list. */
export function downloadUrlPlugin(system: unknown): unknown {
  return (globalThis as unknown as BrowserPage).SwaggerUIBundle.plugins.DownloadUrl(system);
}

/**
 * Sign-in from the UI: when "Try it out" on POST /auth/login (/auth/refresh, /auth/2fa/enable) answers a
 * token, the `bearer` scheme is authorized with it, as if pasted into the Authorize dialog (and kept across
 * reloads like a pasted one, with persistAuthorization). Staff never copy a token by hand.
 */
export function signInFromLoginPlugin() {
  return {
    statePlugins: {
      spec: {
        wrapActions: {
          setResponse:
            (original: SetResponse, system: SwaggerUiSystem): SetResponse =>
            (path, method, response) => {
              const token = (response?.body as { token?: unknown } | undefined)?.token;
              // Enabling two-factor sign-in ends the earlier tokens and answers a new one: held the same way.
              const signIn =
                path === '/auth/login' || path === '/auth/refresh' || path === '/auth/2fa/enable';
              if (signIn && method.toLowerCase() === 'post' && response.ok && typeof token === 'string') {
                const scheme = system.specSelectors
                  .specJson()
                  .getIn(['components', 'securitySchemes', 'bearer']);
                if (scheme) {
                  system.authActions.authorizeWithPersistOption({
                    bearer: { name: 'bearer', schema: scheme.toJS(), value: token },
                  });
                }
              }
              return original(path, method, response);
            },
        },
      },
    },
  };
}

/**
 * The Authorize dialog opens on its first scheme (`bearer`, the staff's own). Swagger UI gives every
 * credential input `autoFocus`, so the last one wins and the dialog opens scrolled to the bottom; once the
 * dialog is in the page, the first input takes the focus back and the dialog scrolls to its top.
 */
export function authorizeDialogPlugin() {
  return {
    statePlugins: {
      auth: {
        wrapActions: {
          showDefinitions: (original: ShowDefinitions) => (definitions: unknown) => {
            const result = original(definitions);
            const page = globalThis as unknown as BrowserPage;
            let framesLeft = 60;
            const focusFirstScheme = () => {
              const input = page.document.querySelector('.modal-ux .auth-container input');
              const content = page.document.querySelector('.modal-ux-content');
              if (!input || !content) {
                if ((framesLeft -= 1) > 0) page.requestAnimationFrame(focusFirstScheme);
                return;
              }
              input.focus();
              content.scrollTop = 0;
            };
            if (definitions) page.requestAnimationFrame(focusFirstScheme);
            return result;
          },
        },
      },
    },
  };
}
