import { contentDisposition } from './ticket-attachments.service';
import { safeFilename } from './ticket-form';

describe('attachment names', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\report.pdf', 'report.pdf'],
    ['bad\u0000name\u001f.txt', 'badname.txt'],
    ['', 'attachment'],
    [undefined, 'attachment'],
    ['dir/', 'attachment'],
    ['x'.repeat(300), 'x'.repeat(255)],
  ])('reduces %p to %p', (input, expected) => {
    expect(safeFilename(input)).toBe(expected);
  });

  it('quotes an ASCII fallback and carries the UTF-8 name', () => {
    expect(contentDisposition('Résumé "final" (1).txt')).toBe(
      `attachment; filename="R_sum_ _final_ (1).txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22%20%281%29.txt`,
    );
    expect(contentDisposition('a\\b;c.txt')).toBe(
      `attachment; filename="a_b;c.txt"; filename*=UTF-8''a%5Cb%3Bc.txt`,
    );
  });
});
