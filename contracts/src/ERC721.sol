// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IERC721Receiver
/// @notice What a contract implements to accept ERC-721 tokens through safeTransferFrom (and
/// the identity registry's register, which mints safely).
interface IERC721Receiver {
    function onERC721Received(address operator, address from, uint256 tokenId, bytes calldata data)
        external
        returns (bytes4);
}

/// @title ERC721
/// @notice A minimal ERC-721 (with the metadata extension's name, symbol and tokenURI left to
/// the concrete contract) for the ERC-8004 identity registry, written for Surety: balances,
/// owners, approvals, operators, transfers and safe transfers, ERC-165. Its errors are the
/// ERC-6093 names, so wallets and explorers that decode them read ours. Receivers are called
/// last, after every state change and event (checks, effects, interactions).
abstract contract ERC721 {
    /// @notice `owner` is not a valid owner (the zero address).
    error ERC721InvalidOwner(address owner);
    /// @notice No token `tokenId` exists.
    error ERC721NonexistentToken(uint256 tokenId);
    /// @notice `sender` is not the owner of `tokenId`, `owner` is.
    error ERC721IncorrectOwner(address sender, uint256 tokenId, address owner);
    /// @notice `receiver` cannot receive tokens (the zero address, or a contract that refused).
    error ERC721InvalidReceiver(address receiver);
    /// @notice `operator` may not move `tokenId`.
    error ERC721InsufficientApproval(address operator, uint256 tokenId);
    /// @notice `approver` may not approve for this token.
    error ERC721InvalidApprover(address approver);
    /// @notice `operator` cannot be an operator (the zero address).
    error ERC721InvalidOperator(address operator);

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);

    mapping(uint256 tokenId => address) private _owners;
    mapping(address owner => uint256) private _balances;
    mapping(uint256 tokenId => address) private _tokenApprovals;
    mapping(address owner => mapping(address operator => bool)) private _operatorApprovals;

    /// @notice ERC-165: ERC-165 itself, ERC-721 and its metadata extension; concrete contracts
    /// may add more.
    function supportsInterface(bytes4 interfaceId) public view virtual returns (bool) {
        return
            interfaceId == 0x01ffc9a7 // ERC-165
                || interfaceId == 0x80ac58cd // ERC-721
                || interfaceId == 0x5b5e139f; // ERC-721 metadata
    }

    function balanceOf(address owner) public view returns (uint256) {
        if (owner == address(0)) revert ERC721InvalidOwner(address(0));
        return _balances[owner];
    }

    function ownerOf(uint256 tokenId) public view returns (address owner) {
        owner = _owners[tokenId];
        if (owner == address(0)) revert ERC721NonexistentToken(tokenId);
    }

    function approve(address to, uint256 tokenId) external {
        address owner = ownerOf(tokenId);
        if (msg.sender != owner && !_operatorApprovals[owner][msg.sender]) revert ERC721InvalidApprover(msg.sender);
        _tokenApprovals[tokenId] = to;
        emit Approval(owner, to, tokenId);
    }

    function getApproved(uint256 tokenId) public view returns (address) {
        ownerOf(tokenId);
        return _tokenApprovals[tokenId];
    }

    function setApprovalForAll(address operator, bool approved) external {
        if (operator == address(0)) revert ERC721InvalidOperator(address(0));
        _operatorApprovals[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address owner, address operator) public view returns (bool) {
        return _operatorApprovals[owner][operator];
    }

    function transferFrom(address from, address to, uint256 tokenId) public {
        if (to == address(0)) revert ERC721InvalidReceiver(address(0));
        address owner = ownerOf(tokenId);
        if (owner != from) revert ERC721IncorrectOwner(from, tokenId, owner);
        if (!_isAuthorized(owner, msg.sender, tokenId)) revert ERC721InsufficientApproval(msg.sender, tokenId);
        _beforeTransfer(from, to, tokenId);
        delete _tokenApprovals[tokenId];
        unchecked {
            _balances[from] -= 1;
            _balances[to] += 1;
        }
        _owners[tokenId] = to;
        emit Transfer(from, to, tokenId);
    }

    function safeTransferFrom(address from, address to, uint256 tokenId) external {
        safeTransferFrom(from, to, tokenId, "");
    }

    function safeTransferFrom(address from, address to, uint256 tokenId, bytes memory data) public {
        transferFrom(from, to, tokenId);
        _checkReceiver(msg.sender, from, to, tokenId, data);
    }

    /// @notice Whether `spender` may act for `tokenId` of `owner`: the owner, an operator of the
    /// owner, or the token's approved address.
    function _isAuthorized(address owner, address spender, uint256 tokenId) internal view returns (bool) {
        return spender != address(0)
            && (spender == owner || _operatorApprovals[owner][spender] || _tokenApprovals[tokenId] == spender);
    }

    /// @notice Creates `tokenId` for `to` (which must not exist yet: callers count ids up).
    /// The caller calls _checkReceiver once its own effects are done.
    function _mint(address to, uint256 tokenId) internal {
        if (to == address(0)) revert ERC721InvalidReceiver(address(0));
        unchecked {
            _balances[to] += 1;
        }
        _owners[tokenId] = to;
        emit Transfer(address(0), to, tokenId);
    }

    /// @notice Called on every transfer between two accounts (not on mint), before the owner changes.
    function _beforeTransfer(address from, address to, uint256 tokenId) internal virtual;

    /// @notice ERC-721's receiver check: a contract `to` must answer onERC721Received with its
    /// selector; its revert reason is passed on.
    function _checkReceiver(address operator, address from, address to, uint256 tokenId, bytes memory data) internal {
        if (to.code.length == 0) return;
        try IERC721Receiver(to).onERC721Received(operator, from, tokenId, data) returns (bytes4 answer) {
            if (answer != IERC721Receiver.onERC721Received.selector) revert ERC721InvalidReceiver(to);
        } catch (bytes memory reason) {
            if (reason.length == 0) revert ERC721InvalidReceiver(to);
            assembly ("memory-safe") {
                revert(add(reason, 0x20), mload(reason))
            }
        }
    }
}
