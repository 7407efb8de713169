"""FE-IIIEE mesh truncation (paper 003): E and curl E on the truncation surface S from the field on S'."""
