process.env.API_MODE = 'distributed';
