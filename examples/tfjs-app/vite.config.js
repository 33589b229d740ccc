import { defineConfig } from 'vite';
import { tandem } from 'tandem/vite';

export default defineConfig({ plugins: [tandem()] });
